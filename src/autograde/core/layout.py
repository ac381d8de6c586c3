"""The results folder's layout, in one place: every path the workflow writes and the CLI reads, and the qrels
variant names those paths carry.

The rules build their output patterns from the same functions by passing wildcards as the names
(``Layout(r).grades("{grader}")`` -> ``r/grades/{grader}.parquet``), so a rule, a stage and a command can never
disagree on a file name.

>>> lay = Layout("results")
>>> lay.leaderboard("sim", "max-4", "map")
'results/leaderboards/sim/max-4/map.tsv'
>>> lay.parse_leaderboard("results/leaderboards/sim/max-4/map.tsv")
{'grader': 'sim', 'qrels': 'max-4', 'measure': 'map'}
>>> str(QrelsVariant.parse("count-3")), QrelsVariant.parse("max-4").level
('count-3', 4)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

from autograde.core.errors import AutogradeError

VariantMode = Literal["max", "count", "threshold", "expected", "probability"]
VARIANT_MODES: tuple[str, ...] = ("max", "count", "threshold", "expected", "probability")
"""max / count: Rubric-Qrels of one grader; threshold / expected / probability: calibrated labels."""
VARIANT_PATTERN = r"(max|count|threshold|expected|probability)-\d+"
"""The regular expression of a variant name (the Snakefile's wildcard constraint)."""
HUMAN = "human"
"""The pseudo-grader of the human judgments (leaderboards under the official qrels)."""
CALIBRATED = "calibrated"
"""The pseudo-grader of the calibrated relevance labels."""


CHECKOUT = Path(__file__).resolve().parents[3]
"""The checkout autograde runs from (an editable install): its Snakefile, profiles/ and envs/."""
SNAKEFILE = CHECKOUT / "Snakefile"
PROFILES = CHECKOUT / "profiles"
ENVS = CHECKOUT / "envs"
"""The workflow's conda environment files (``--sdm conda``)."""


REFERENCE_DATA = "../shared/data"
"""The reference data folder the shipped configs read (``make data`` fills it; the manifest of
:mod:`autograde.refdata` names the same folder, a test keeps them equal)."""
MADE_BY: tuple[tuple[str, str], ...] = (
    (REFERENCE_DATA, "it is reference data: run `make data` (autograde data fetch; docs/data.md says where each file "
                     "comes from)"),
    ("work/dl20-synth", "it is the DL20-size synthetic experiment's data: run `make dl20-synth` (after `make data`)"),
)
"""(folder, how its files are made) of the folders whose files a command makes, not the user."""


def made_by(path: str | Path) -> str | None:
    """How a missing input file is made when it lies in one of the :data:`MADE_BY` folders (else None): the fix
    of a missing file that the user is not meant to write.

    >>> made_by("../shared/data/dl20/dl20-queries.json").startswith("it is reference data: run `make data`")
    True
    >>> made_by("data/my-runs/x.run") is None
    True
    """
    p = Path(path).expanduser().resolve()
    for folder, how in MADE_BY:
        if p.is_relative_to(Path(folder).resolve()):
            return how
    return None


class UnknownVariantError(AutogradeError, ValueError):
    """A qrels variant name that is not ``<mode>-<threshold>``."""


@dataclass(frozen=True, order=True)
class QrelsVariant:
    """One qrels variant of a grader: how passage labels are made (``mode``) and the threshold ``tau``.

    ``max-4``: label = max grade, evaluated at trec_eval relevance level 4; ``count-3``: label = number of items
    graded >= 3, relevant from 1 item up; calibrated labels (``threshold-2``, ``expected-2``) use ``tau`` as the
    relevance level.
    """

    mode: VariantMode
    tau: int

    @classmethod
    def parse(cls, text: str) -> QrelsVariant:
        """``"max-4"`` -> ``QrelsVariant("max", 4)``; anything else is an :class:`UnknownVariantError`."""
        m = re.fullmatch(VARIANT_PATTERN, text)
        if not m:
            raise UnknownVariantError(f"{text!r} is not a qrels variant (fix: write <mode>-<threshold> with mode one "
                                      f"of {', '.join(VARIANT_MODES)}, e.g. max-4 or count-3)")
        mode, tau = text.rsplit("-", 1)
        return cls(cast(VariantMode, mode), int(tau))

    def __str__(self) -> str:
        return f"{self.mode}-{self.tau}"

    @property
    def level(self) -> int:
        """The trec_eval relevance level (``-l``) these qrels are evaluated at."""
        return 1 if self.mode == "count" else self.tau


MissingQueries = Literal["zero", "skip"]
"""How a mean over queries treats a query a system has no value for: ``zero`` (it counts 0, trec_eval ``-c``) or
``skip`` (it is left out)."""


@dataclass(frozen=True)
class Leaderboard:
    """One leaderboard of a run: who made its labels, which qrels variant, which measure, and its files.

    ``qrels`` is ``-`` for the human qrels, ``cover-<tau>`` for cover, ``nuggets`` for nugget scores; ``path`` is the
    leaderboard TSV, ``per_query`` the per-query table it was averaged from and ``column`` the column of the
    measure's values in it (``value`` in a long evaluation table, else the measure's own column);
    ``missing_queries`` how its means treat a query a system has no value for (``zero``: it counts 0; ``skip``: it
    is left out), so that every consumer ranks the systems as the leaderboard does.
    """

    grader: str
    qrels: str
    measure: str
    path: str
    per_query: str
    column: str = "value"
    missing_queries: MissingQueries = "zero"

    def as_dict(self) -> dict[str, str]:
        """The leaderboard as rule params (plain strings)."""
        return {"grader": self.grader, "qrels": self.qrels, "measure": self.measure, "path": self.path,
                "per_query": self.per_query, "column": self.column, "missing_queries": self.missing_queries}

    @classmethod
    def from_dict(cls, d: dict[str, str]) -> Leaderboard:
        missing = d.get("missing_queries", "zero")
        return cls(d["grader"], d["qrels"], d["measure"], d["path"], d["per_query"], d.get("column", "value"),
                   "skip" if missing == "skip" else "zero")


@dataclass(frozen=True)
class Layout:
    """Every path under one results folder (``results_dir`` of the config)."""

    root: str = "results"

    @classmethod
    def of(cls, root: str | Path) -> Layout:
        return cls(str(root).rstrip("/") or ".")

    # ingest and pool
    @property
    def ingest_dir(self) -> str:
        """The folder of the ingest tables."""
        return f"{self.root}/ingest"

    def ingest(self, table: str) -> str:
        """``queries``, ``rankings``, ``answer_passages`` or ``judgments``."""
        return f"{self.root}/ingest/{table}.parquet"

    @property
    def pool(self) -> str:
        return f"{self.root}/pool/pool.parquet"

    def pool_shard(self, item: str) -> str:
        return f"{self.root}/pool/shards/{item}.parquet"

    # grades
    def grades(self, grader: str, suffix: str = ".parquet") -> str:
        """The merged grades (``.parquet``), their ``.stats.json`` or ``.failures.jsonl``."""
        return f"{self.root}/grades/{grader}{suffix}"

    def grade_shard(self, grader: str, item: str, suffix: str = ".parquet") -> str:
        return f"{self.root}/grades/{grader}/shards/{item}{suffix}"

    # qrels, evaluations, leaderboards
    def qrels(self, grader: str, variant: str | QrelsVariant) -> str:
        return f"{self.root}/qrels/{grader}/{variant}.qrels"

    def evaluation(self, grader: str, variant: str | QrelsVariant | None = None, suffix: str = ".parquet") -> str:
        """Per-query measures of every system under a grader's variant (human qrels: no variant), or ``.stats.json``.

        The stats say how many queries the job computed and how many it read from the per-query cache."""
        if variant is None:
            return f"{self.root}/eval/{grader}{suffix}"
        return f"{self.root}/eval/{grader}/{variant}{suffix}"

    def leaderboards_dir(self, grader: str | None = None) -> str:
        """The folder of one grader's leaderboards (its variants as subfolders), or of all of them."""
        return f"{self.root}/leaderboards" + (f"/{grader}" if grader else "")

    def leaderboard(self, grader: str, variant: str | QrelsVariant | None, measure: str) -> str:
        """A leaderboard TSV; ``variant`` None for the human qrels, ``cover-<tau>`` for cover measures."""
        if variant is None:
            return f"{self.root}/leaderboards/{grader}/{measure}.tsv"
        return f"{self.root}/leaderboards/{grader}/{variant}/{measure}.tsv"

    def parse_leaderboard(self, path: str | Path) -> dict[str, str]:
        """``{grader, qrels, measure}`` of a leaderboard path (``qrels`` is ``-`` for the human leaderboards).

        A path outside this layout names its grader by its folder and its measure by its stem.
        """
        p = Path(path)
        root = Path(self.root) / "leaderboards"
        parts = (p.relative_to(root) if p.is_relative_to(root) else Path(p.name)).with_suffix("").parts
        if len(parts) == 3:
            return {"grader": parts[0], "qrels": parts[1], "measure": parts[2]}
        if len(parts) == 2:
            return {"grader": parts[0], "qrels": "-", "measure": parts[1]}
        return {"grader": p.parent.name or "-", "qrels": "-", "measure": p.stem}

    def cover(self, grader: str, tau: int | str, suffix: str = ".parquet") -> str:
        """Per-query cover of one grader at threshold ``tau`` (suffix ``.stats.json``: what the job computed)."""
        return f"{self.root}/cover/{grader}/cover-{tau}{suffix}"

    @property
    def correlation(self) -> str:
        return f"{self.root}/correlation.tsv"

    def metrics(self, name: str, suffix: str = ".json") -> str:
        """The evaluation-server metrics (``retrieval`` / ``generation``; ``.json`` or ``.md``)."""
        return f"{self.root}/metrics/{name}{suffix}"

    # reports and site
    def report(self, grader: str, name: str) -> str:
        """A per-grader report file (``verify.parquet``, ``agreement.tsv``, ...)."""
        return f"{self.root}/reports/{grader}/{name}"

    def reports(self, name: str) -> str:
        """A report over all graders (``correlation.tsv``, plots)."""
        return f"{self.root}/reports/{name}"

    @property
    def site(self) -> str:
        return f"{self.root}/site"

    # banks, rubric, calibrated qrels
    def bank(self, name: str, suffix: str = ".jsonl.gz") -> str:
        """A generated bank (``.jsonl.gz``), its ``.stats.json`` or ``.failures.jsonl``."""
        return f"{self.root}/banks/{name}{suffix}"

    def bank_shard(self, name: str, item: str, suffix: str = ".jsonl") -> str:
        return f"{self.root}/banks/{name}/shards/{item}{suffix}"

    def rubric(self, name: str) -> str:
        """An LLM-RUBRIC output (``model.pt``, ``evaluation.json``, ``predictions/<name>.parquet``)."""
        return f"{self.root}/rubric/{name}"

    def calibrated(self, name: str) -> str:
        """A calibrated-qrels output (``report.json``, ``passages.parquet``, ...)."""
        return f"{self.root}/calibrated_qrels/{name}"

    @property
    def calibrated_model(self) -> str:
        """The model folder fitted on all judgments (``calibrated_qrels.model`` of another experiment)."""
        return f"{self.root}/calibrated_qrels/model"

    # reproduction of the papers' tables (make reproduce)
    def reproduction(self, name: str) -> str:
        """A file of the paper reproduction (``index.md``, ``index.json``, ``index.html``)."""
        return f"{self.root}/reproduction/{name}"

    def reproduction_table(self, table: str, name: str = "measured.json") -> str:
        """What the tool measured for one reproduced table (``measured.json``) and that table's own outputs."""
        return f"{self.root}/reproduction/tables/{table}/{name}"

    # judge audit (autograde.audit)
    def audit(self, name: str) -> str:
        """A file of the judge audit over every grader: ``meta/labels.tsv``, ``meta/systems.tsv``,
        ``meta/per-topic.tsv``, ``meta/confusion.tsv``, ``meta/meta-evaluation.md``."""
        return f"{self.root}/audit/{name}"

    def audit_grader(self, grader: str, name: str) -> str:
        """A file of one grader's robustness audit: ``pairs.parquet``, ``summary.tsv``, ``leaderboard.tsv``,
        ``stats.json``, ``robustness.md``."""
        return f"{self.root}/audit/robustness/{grader}/{name}"

    # estimates from a human sample (autograde.ppi)
    def human_sample(self, name: str) -> str:
        """A file of the human-sample estimates: ``<prediction>/estimates.tsv``, ``<prediction>/differences.tsv``,
        ``summary.json``."""
        return f"{self.root}/human_sample/{name}"

    # nugget scores of RAG answers (autograde.nuggets)
    def nugget_table(self, name: str) -> str:
        """Tables shared by every assessor: ``answers.parquet`` (whole answers), ``importance.parquet`` and
        ``importance.stats.json``."""
        return f"{self.root}/nuggets/{name}"

    def nuggets(self, assessor: str, name: str) -> str:
        """One assessor's merged outputs: ``assignments.parquet``, ``assignments.jsonl`` (TREC RAG format),
        ``stats.json``, ``failures.jsonl``."""
        return f"{self.root}/nuggets/{assessor}/{name}"

    def nugget_shard(self, assessor: str, item: str, suffix: str) -> str:
        """One assessor's shard file: ``.grades.parquet``, ``.stats.json``, ``.failures.jsonl`` (assignment grades),
        ``.assignments.parquet``, ``.scores.parquet`` (labels and per-answer scores)."""
        return f"{self.root}/nuggets/{assessor}/shards/{item}{suffix}"


@dataclass(frozen=True)
class CacheFolder:
    """One folder of the cache: what it holds and what deleting it costs."""

    name: str
    holds: str
    delete: str
    """What deleting it costs (``safe``: rebuilt on the next run at little cost)."""


CACHE_FOLDERS: tuple[CacheFolder, ...] = (
    CacheFolder("grades", "every LLM grade, one folder per grader identity (content-addressed JSONL segments; shared "
                "by every experiment and workflow that names the same cache)", "costly: every pair is graded again"),
    CacheFolder("generations", "the answers of test-bank generation (content-addressed like the grades)",
                "costly: every query's bank is generated again"),
    CacheFolder("corpus-index", "the index of each corpus file (doc id -> where its line is), verified before use",
                "safe: rebuilt on the next run (one pass over the corpus)"),
    CacheFolder("passages", "the texts of the passages looked up in each corpus file (only those asked for: the "
                "pooled passages, never a copy of the corpus), one store per file content, so a later lookup of the "
                "same pool reads them instead of decoding the corpus again", "safe: looked up again through the "
                "corpus index"),
    CacheFolder("datasets", "the queries and qrels of data.dataset written as files (ir_datasets keeps its downloads "
                "in $IR_DATASETS_HOME)", "safe: rewritten from ir_datasets' own cache"),
    CacheFolder("embeddings", "the unit vectors of the texts the embedded grader encoded, one folder per model "
                "identity and query (binary segments), so that a bank edit encodes the new item and not the passages "
                "again", "safe: the next grading of new pairs encodes their texts again"),
    CacheFolder("checks", "stamps of input checks that passed (keyed by the config and the inputs' sizes and times)",
                "safe: the checks run again"),
    CacheFolder("analysis", "per-query values of the analysis stages (every system's measures, cover, the bank impact, "
                "the site's query pages) and per-query digests of the rankings, keyed by content "
                "(autograde.core.querycache)", "safe: the next run computes every query again (a full analysis)"),
)
"""Every folder under ``grading.cache_dir``. Nothing else writes there (a structure test keeps it so)."""


@dataclass(frozen=True)
class CacheLayout:
    """Every path under one cache folder (``grading.cache_dir``): the cache's layout, beside the results layout.

    >>> CacheLayout.of("cache").grades("ab12")
    'cache/grades/ab12'
    """

    root: str = "cache"

    @classmethod
    def of(cls, root: str | Path) -> CacheLayout:
        return cls(str(root).rstrip("/") or ".")

    def folder(self, name: str) -> str:
        """One of :data:`CACHE_FOLDERS` (an unknown name is a programming error)."""
        assert name in {f.name for f in CACHE_FOLDERS}, name
        return f"{self.root}/{name}"

    def grades(self, identity: str) -> str:
        """The grades of one grader identity (its hash)."""
        return f"{self.folder('grades')}/{identity}"

    def generations(self) -> str:
        return self.folder("generations")

    @property
    def corpus_index(self) -> str:
        return self.folder("corpus-index")

    def passages(self, address: str) -> str:
        """The passage store of one corpus file's content (its address: :mod:`autograde.corpus.passage_store`)."""
        return f"{self.folder('passages')}/{address}"

    def dataset(self, address: str) -> str:
        return f"{self.folder('datasets')}/{address}"

    def embeddings(self, identity: str, partition: str) -> str:
        """The stored text vectors of one encoder identity (its hash), one folder per partition (a query's hash)."""
        return f"{self.folder('embeddings')}/{identity}/{partition}"

    def check_stamp(self, key: str) -> str:
        return f"{self.folder('checks')}/{key}.json"

    def analysis(self, stage: str) -> str:
        """The stored per-query values of one analysis stage (``evaluate``, ``cover``, ...)."""
        return f"{self.folder('analysis')}/{stage}"
