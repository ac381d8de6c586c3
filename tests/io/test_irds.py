"""``data.dataset``: a small local dataset registered with ir_datasets (no network) stands in for the files.

The dataset is the tiny inline dataset of ``conftest.py`` (queries, qrels, corpus as TSV files) registered under
``autograde-test/mini`` by a module named in ``data.dataset_modules``. The workflow run from ``data.dataset`` alone
must give the same pool, grades, qrels and leaderboards as the same data given as files.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from support.helpers import run_workflow
from support.mini import MINI_CORPUS, write_mini_dataset

from autograde.cli import main

pytest.importorskip("ir_datasets", reason="ir-datasets is a dependency of autograde (make install)")

DATASET = "autograde-test/mini"
REGISTER = """\
import contextlib

import ir_datasets
from ir_datasets.datasets.base import Dataset
from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
from ir_datasets.util import BaseDownload, Download, LocalDownload

DATA = {data!r}


def register(name, *parts):
    ir_datasets.registry._registered.pop(name, None)  # pytest runs many experiments in one process
    ir_datasets.registry.register(name, Dataset(*parts))


register("autograde-test/mini", TsvDocs(LocalDownload(DATA + "/corpus.tsv")),
         TsvQueries(LocalDownload(DATA + "/queries.tsv")), TrecQrels(LocalDownload(DATA + "/qrels.txt"), {{}}))
register("autograde-test/mini/no-qrels", TsvDocs(LocalDownload(DATA + "/corpus.tsv")),
         TsvQueries(LocalDownload(DATA + "/queries.tsv")))


class Served(BaseDownload):  # a remote file without a network: ir_datasets downloads (copies) it before use

    def __init__(self, path):
        self.source = path

    @contextlib.contextmanager
    def stream(self):
        with open(self.source, "rb") as f:
            yield f


def remote(name):
    return Download([Served(DATA + "/" + name)], cache_path=str(ir_datasets.util.home_path() / "autograde" / name))


register("autograde-test/remote", TsvDocs(remote("corpus.tsv")), TsvQueries(remote("queries.tsv")),
         TrecQrels(remote("qrels.txt"), {{}}))
register("autograde-test/elsewhere", TsvDocs(LocalDownload(DATA + "/not-here/docs.tsv")),
         TsvQueries(LocalDownload(DATA + "/not-here/q.tsv")))
"""


def dataset_config(root: Path, shards: int = 2, **data: object) -> Path:
    """The tiny experiment with its queries, qrels and corpus taken from the registered dataset."""
    cfg_path = write_mini_dataset(root, shards)
    d = root / "data"
    (d / "corpus.tsv").write_text("".join(f"{k}\t{v}\n" for k, v in MINI_CORPUS.items()))
    (root / "register_mini.py").write_text(REGISTER.format(data=str(d)))
    cfg = yaml.safe_load(cfg_path.read_text())
    for key in ("queries", "qrels", "corpus"):
        cfg["data"].pop(key)
    cfg["data"] |= {"dataset": DATASET, "dataset_modules": ["register_mini.py"], **data}
    cfg_path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return cfg_path


@pytest.fixture(autouse=True)
def irds_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """ir_datasets' own cache in the test's folder (never the user's ~/.ir_datasets)."""
    home = tmp_path / "irds-home"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    return home


def validate(cfg: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["validate", "--config", str(cfg)])
    out = capsys.readouterr().out
    return code, (json.loads(out) if code == 0 else {})


def test_validate_reports_the_dataset_and_its_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    cfg = dataset_config(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, report = validate(cfg, capsys)
    assert code == 0
    ds = report["dataset"]
    assert ds["id"] == DATASET and ds["ir_datasets_home"].endswith("irds-home")
    assert ds["queries"] == {"count": 3, "local": True} and ds["qrels"] == {"count": 12, "local": True}
    assert ds["docs"]["local"] is True
    assert report["queries"] == 3 and report["judgments"] == 12 and report["pool_passages"] > 0


def test_validate_never_downloads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                  messages: io.StringIO) -> None:
    cfg = dataset_config(tmp_path, dataset="autograde-test/elsewhere")
    monkeypatch.chdir(tmp_path)
    code, report = validate(cfg, capsys)
    assert code == 0
    assert report["dataset"]["queries"] == {"count": None, "local": False}
    assert "are not local yet (nothing downloaded); the first run downloads them into" in messages.getvalue()
    assert not (tmp_path / "cache" / "datasets").exists()


def test_the_first_real_use_downloads_and_says_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], messages: io.StringIO,
                                                     irds_home: Path) -> None:
    """A dataset whose files are remote: validate downloads nothing; ingest and pool download through ir_datasets
    into its cache, saying so first; then validate finds everything local."""
    cfg = dataset_config(tmp_path, dataset="autograde-test/remote")
    monkeypatch.chdir(tmp_path)
    code, report = validate(cfg, capsys)
    assert code == 0 and not report["dataset"]["queries"]["local"] and not report["dataset"]["docs"]["local"]
    assert not (irds_home / "autograde").exists()
    assert main(["ingest", "--config", str(cfg), "--out", "results/ingest"]) == 0
    assert f"downloading its queries through ir_datasets into {irds_home}" in messages.getvalue()
    assert (irds_home / "autograde" / "queries.tsv").is_file() and (irds_home / "autograde" / "qrels.txt").is_file()
    assert main(["pool", "--config", str(cfg), "--ingest", "results/ingest", "--out", "results/pool.parquet"]) == 0
    assert f"downloading its docs through ir_datasets into {irds_home}" in messages.getvalue()
    assert len(pd.read_parquet(tmp_path / "results/pool.parquet")) > 0
    code, report = validate(cfg, capsys)
    assert code == 0 and all(report["dataset"][e]["local"] for e in ("queries", "qrels", "docs"))


@pytest.mark.parametrize(("data", "expected"), [
    ({"dataset": "autograde-test/mni"}, "did you mean 'autograde-test/mini'"),
    ({"dataset": "msmarco-pasage/trec-dl-2020"}, "did you mean 'msmarco-passage/trec-dl-2020'"),
    ({"dataset": "autograde-test/mini/no-qrels", "dataset_qrels": "required"},
     "has no qrels, and data.dataset_qrels is 'required'"),
    ({"dataset_query_field": "txt"}, "have no field 'txt'; did you mean 'text'?"),
    ({"dataset_modules": ["nowhere.py"]}, "data.dataset_modules: cannot import 'nowhere.py'"),
])
def test_bad_dataset_config_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             messages: io.StringIO, data: dict, expected: str) -> None:
    cfg = dataset_config(tmp_path, **data)
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--config", str(cfg)]) == 2
    assert expected in messages.getvalue() and "fix:" in messages.getvalue()


def test_pooled_id_missing_from_the_docstore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             messages: io.StringIO) -> None:
    cfg = dataset_config(tmp_path)
    corpus = tmp_path / "data" / "corpus.tsv"
    corpus.write_text("".join(line + "\n" for line in corpus.read_text().splitlines() if not line.startswith("d2c")))
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--config", str(cfg)]) == 2
    text = messages.getvalue()
    assert "the docstore of ir_datasets:autograde-test/mini" in text and "e.g. q2/d2c" in text, text


def test_documents_with_titles_are_joined_like_the_file_readers() -> None:
    from autograde.io.corpus import doc_from_json
    from autograde.io.irds import doc_text

    class Doc:
        _fields = ("doc_id", "title", "segment")

        def __init__(self) -> None:
            self.doc_id, self.title, self.segment = "d", "Bees", "They make honey."

    from autograde.core.errors import Problems

    assert doc_text(Doc()) == doc_from_json("x", 1, {"docid": "d", "title": "Bees", "segment": "They make honey."},
                                            Problems())[1] == "Bees\nThey make honey."


@pytest.mark.workflow
@pytest.mark.slow
def test_workflow_from_the_dataset_equals_the_same_data_as_files(tmp_path: Path, mini_run: Path) -> None:
    """The same queries, qrels and corpus from the registered dataset give the same results as the session's finished
    run of them as files (tests/conftest.py ``mini_run``, the same experiment otherwise)."""
    files, dataset = mini_run, tmp_path / "dataset"
    dataset_config(dataset)
    targets = ["results/pool/pool.parquet", "results/grades/sim.parquet", "results/qrels/sim/max-3.qrels",
               "results/leaderboards/sim/max-3/ndcg_cut_10.tsv", "results/leaderboards/human/recip_rank.tsv",
               "results/ingest/queries.parquet", "results/ingest/judgments.parquet"]
    run = run_workflow(dataset, *targets)
    assert run.returncode == 0, run.stderr[-3000:]
    log = (dataset / "logs" / "pool.log").read_text()
    for rel in targets:
        a, b = files / rel, dataset / rel
        if rel.endswith(".parquet"):
            x, y = pd.read_parquet(a), pd.read_parquet(b)
            if "provenance" in x.columns:
                x, y = x.drop(columns="provenance"), y.drop(columns="provenance")
            pd.testing.assert_frame_equal(x, y, check_like=True)
        else:
            assert a.read_text() == b.read_text(), rel
    assert not (dataset / "cache" / "corpus-index").exists(), log  # passages came from the docstore
    assert list((dataset / "cache" / "datasets").glob("*/queries.json"))


def test_a_registered_remote_dataset_is_reported_without_a_download(irds_home: Path) -> None:
    """TREC DL 2020 (MS MARCO passage): counts from ir_datasets' metadata, nothing local, nothing fetched."""
    from autograde.config.model import DataConfig
    from autograde.io.irds import dataset_report

    report = dataset_report(DataConfig(dataset="msmarco-passage/trec-dl-2020/judged"))
    assert report["queries"] == {"count": 54, "local": False} and report["qrels"] == {"count": 11386, "local": False}
    assert report["docs"] == {"count": 8841823, "local": False}
    assert not [p for p in irds_home.rglob("*") if p.is_file()]


def test_unknown_query_of_a_run_names_the_dataset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  messages: io.StringIO) -> None:
    cfg = dataset_config(tmp_path)
    with (tmp_path / "data/runs/good.run").open("a") as fh:
        fh.write("q9 Q0 d1a 1 1.0 good\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--config", str(cfg)]) == 2
    assert "good.run:13: query id 'q9' is not in the queries of ir_datasets:autograde-test/mini" in messages.getvalue()
