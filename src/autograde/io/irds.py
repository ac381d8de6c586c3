"""``ir_datasets`` as a data source: ``data.dataset: <id>`` supplies queries, qrels and passage texts.

Queries and qrels are written once into plain files under ``<cache_dir>/datasets/<address>/`` (``queries.json``,
``qrels.txt``) by :func:`resolve_dataset`, so every later stage reads files as if the user had given them; passage
texts come from the dataset's docstore (:func:`docstore_texts`), looked up by id. Anything ir_datasets downloads
goes to its own cache (``$IR_DATASETS_HOME``, default ``~/.ir_datasets``) and is logged with that place first.
``autograde validate`` only reports (:func:`dataset_report`): it never downloads.

A collection of your own becomes a dataset by registering it in a module named in ``data.dataset_modules``::

    import ir_datasets
    from ir_datasets.formats import TrecQrels, TsvDocs, TsvQueries
    from ir_datasets.util import LocalDownload
    ir_datasets.registry.register("my/collection", ir_datasets.datasets.base.Dataset(
        TsvDocs(LocalDownload("docs.tsv")), TsvQueries(LocalDownload("queries.tsv")),
        TrecQrels(LocalDownload("qrels.txt"), {})))
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autograde.core.errors import AutogradeError, ConfigError, Problems, UnknownNameError
from autograde.core.ids import content_hash
from autograde.core.layout import CacheLayout
from autograde.core.log import logger
from autograde.core.text import atomic_write_text
from autograde.io.corpus import TEXT_KEYS, join_title

if TYPE_CHECKING:
    from autograde.config.model import Config, DataConfig

ENTITIES = ("queries", "qrels", "docs")


class DatasetNotLocalError(AutogradeError):
    """A step that must not download (``autograde validate``) needs dataset files that are not local yet."""


class DatasetDownloadError(AutogradeError):
    """ir_datasets could not get the files of a dataset (no network to its source, or a source that needs a login)."""


def _downloading(ds: Any, data: DataConfig, entity: str, fn: Any) -> Any:
    """``fn()``, where ir_datasets may download the ``entity`` of the dataset: a failure names what is not local,
    where it goes, and the fix, instead of ir_datasets' own stack."""
    try:
        return fn()
    except AutogradeError:
        raise
    except Exception as exc:
        missing = [p for p, exists in entity_files(ds, entity) if not exists]
        home = _ir_datasets().util.home_path()
        cause = str(exc.args[0]) if isinstance(exc, RuntimeError) and exc.args else f"{type(exc).__name__}: {exc}"
        raise DatasetDownloadError(
            f"data.dataset {data.dataset}: ir_datasets could not download its {entity} ({cause[:200]}); not local: "
            f"{', '.join(missing[:3]) or 'its source files'}{' ...' if len(missing) > 3 else ''} (fix: run once on a "
            f"machine with internet (files go to {home}, or $IR_DATASETS_HOME), copy them there, or give the files "
            f"yourself: data.queries / data.qrels / data.corpus)") from None


def _ir_datasets() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise ConfigError("data.dataset needs the ir-datasets package (fix: pip install ir-datasets, or "
                          "make install)") from None
    return ir_datasets


def import_modules(modules: list[str]) -> None:
    """Import the modules (names, or ``.py`` files) that register the user's own datasets; each once per process."""
    for m in modules:
        try:
            if m.endswith(".py"):
                path = Path(m).resolve()
                name = f"autograde_dataset_{content_hash(str(path), 16)}"
                if name in sys.modules:
                    continue
                spec = importlib.util.spec_from_file_location(name, path)
                if spec is None or spec.loader is None or not path.is_file():
                    raise FileNotFoundError(f"no such file: {path}")
                module = importlib.util.module_from_spec(spec)
                sys.modules[name] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[name]
                    raise
            else:
                importlib.import_module(m)
        except Exception as exc:  # any failure of the user's module is reported with its cause
            raise ConfigError(f"data.dataset_modules: cannot import {m!r}: {type(exc).__name__}: {exc} (fix: give an "
                              "importable module name or an existing .py file that registers the dataset)") from None


def load_dataset(data: DataConfig) -> Any:
    """The ir_datasets dataset of ``data.dataset``; an unknown id suggests the closest registered ids."""
    irds = _ir_datasets()
    import_modules(list(data.dataset_modules))
    try:
        return irds.load(data.dataset)
    except KeyError:
        known = sorted(irds.registry)
        close = difflib.get_close_matches(str(data.dataset), known, n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(map(repr, close))}? " if close else ""
        raise UnknownNameError(
            f"data.dataset: {data.dataset!r} is not an ir_datasets id ({len(known)} are registered); {hint}(fix: "
            "pick an id listed at ir-datasets.com, or register your own in a module named in "
            "data.dataset_modules)") from None


def _walk(obj: Any, seen: set[int], depth: int = 0) -> list[tuple[str, bool]]:
    """The files behind a dataset component: ``(path, exists)`` of every cache or download it would read."""
    from ir_datasets.util import Cache, Download, LocalDownload

    if id(obj) in seen or depth > 8:
        return []
    seen.add(id(obj))
    if isinstance(obj, LocalDownload):
        return [(str(obj._path), obj._path.exists())]
    if isinstance(obj, Cache):
        if Path(obj._path).exists():
            return [(str(obj._path), True)]
        return _walk(obj._streamer, seen, depth + 1) or [(str(obj._path), False)]
    if isinstance(obj, Download):
        local = [m for m in obj.mirrors if isinstance(m, LocalDownload) and m._path.exists()]
        cache = obj._cache_path
        exists = bool(local) or (cache is not None and Path(cache).exists())
        return [(str(cache or (local[0]._path if local else obj.mirrors[0])), exists)]
    if isinstance(obj, list | tuple):
        return [f for x in obj for f in _walk(x, seen, depth + 1)]
    if isinstance(obj, dict):
        return [f for x in obj.values() for f in _walk(x, seen, depth + 1)]
    if type(obj).__module__.startswith("ir_datasets") and hasattr(obj, "__dict__"):
        return [f for x in vars(obj).values() for f in _walk(x, seen, depth + 1)]
    return []


def entity_files(dataset: Any, entity: str) -> list[tuple[str, bool]]:
    """``(path, exists)`` of the files one entity (queries, qrels, docs) of a dataset reads."""
    if not dataset.has(entity):
        return []
    return _walk(getattr(dataset, f"{entity}_handler")(), set())


def is_local(dataset: Any, entity: str) -> bool:
    """Whether an entity can be read without a download (its files, or for docs a built docstore, exist)."""
    if entity == "docs":
        try:
            if dataset.docs_store().built():
                return True
        except Exception:  # a docstore that cannot even say is not local
            pass
    files = entity_files(dataset, entity)
    return bool(files) and all(exists for _, exists in files)


def dataset_report(data: DataConfig) -> dict[str, Any]:
    """What ``autograde validate`` says about ``data.dataset``: counts and whether each part is local (no download)."""
    ds = load_dataset(data)
    irds = _ir_datasets()
    out: dict[str, Any] = {"id": data.dataset, "ir_datasets_home": str(irds.util.home_path())}
    for entity in ENTITIES:
        if not ds.has(entity):
            out[entity] = None
            continue
        local = is_local(ds, entity)
        count = None
        try:
            if entity == "docs":
                count = ds.docs_count()  # a built docstore, or ir_datasets' metadata: never a download
            elif local:
                count = sum(1 for _ in getattr(ds, f"{entity}_iter")())
            else:
                count = getattr(ds, f"{entity}_metadata")().get("count")  # the package's metadata only
        except Exception:  # counts are informative only
            count = None
        out[entity] = {"count": count, "local": local}
    return out


def not_local_summary(data: DataConfig) -> str:
    """What of ``data.dataset`` is not local yet and what its first use downloads (for ``autograde validate``)."""
    ds = load_dataset(data)
    parts = []
    for entity in ENTITIES:
        if ds.has(entity) and not is_local(ds, entity):
            missing = [str(p) for p, exists in entity_files(ds, entity) if not exists]
            parts.append(f"{entity} ({'; '.join(missing[:2]) or 'built on first use'}"
                         f"{' ...' if len(missing) > 2 else ''})")
    home = _ir_datasets().util.home_path()
    return (f"data.dataset {data.dataset}: not local yet: {', '.join(parts)}; the first run that needs them downloads "
            f"them through ir_datasets into {home} (set IR_DATASETS_HOME to put them elsewhere)") if parts else ""


def query_text(query: Any, field: str, dataset_id: str) -> str:
    """The text of one ir_datasets query from the configured field."""
    if field not in query._fields:
        fields = [f for f in query._fields if f != "query_id"]
        close = difflib.get_close_matches(field, fields, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UnknownNameError(f"data.dataset_query_field: the queries of {dataset_id} have no field {field!r}; {hint}"
                               f"(fix: use one of {', '.join(fields)})")
    value = getattr(query, field)
    return value if isinstance(value, str) else str(value)


def doc_text(doc: Any) -> str:
    """A document's passage text: title and text joined as the corpus file readers join them."""
    fields = getattr(doc, "_fields", ())
    key = next((k for k in TEXT_KEYS if k in fields), None)
    if key is None:
        return str(doc.default_text()) if hasattr(doc, "default_text") else ""
    return join_title(getattr(doc, "title", None), str(getattr(doc, key)))


def _address(data: DataConfig, ds: Any) -> str:
    irds = _ir_datasets()
    files = []
    for entity in ("queries", "qrels"):
        for path, _exists in entity_files(ds, entity):
            try:
                st = Path(path).stat()
                files.append([path, st.st_size, st.st_mtime_ns])
            except OSError:
                files.append([path, None, None])
    return content_hash({"dataset": data.dataset, "query_field": data.dataset_query_field,
                         "ir_datasets": irds.__version__, "files": files}, 24)


def _fetch_note(ds: Any, data: DataConfig, entity: str, download: bool) -> None:
    """Say what is downloaded and where before ir_datasets does it; refuse where downloads are not allowed."""
    if is_local(ds, entity):
        return
    home = _ir_datasets().util.home_path()
    if not download:
        raise DatasetNotLocalError(f"the {entity} of dataset {data.dataset} are not local yet (nothing downloaded); "
                                   f"the first run downloads them into {home}")
    logger.info("dataset %s: downloading its %s through ir_datasets into %s (once; set IR_DATASETS_HOME to put "
                "them elsewhere)", data.dataset, entity, home)


def _write_queries(ds: Any, data: DataConfig, path: Path) -> None:
    probs = Problems()
    out: dict[str, str] = {}
    where = f"ir_datasets:{data.dataset}"
    for q in ds.queries_iter():
        text = query_text(q, data.dataset_query_field, str(data.dataset)).strip()
        if q.query_id in out:
            probs.add(where, None, f"query id {q.query_id!r} appears twice", "give data.queries instead")
        elif not text:
            probs.add(where, None, f"query {q.query_id!r} has no {data.dataset_query_field!r}",
                      "pick another data.dataset_query_field, or give data.queries")
        out[q.query_id] = text
    probs.raise_if_any()
    atomic_write_text(path, json.dumps(out, ensure_ascii=False, indent=0) + "\n")
    logger.info("dataset %s: %d queries (field %r) written to %s", data.dataset, len(out), data.dataset_query_field,
                path)


def _write_qrels(ds: Any, data: DataConfig, path: Path) -> None:
    lines = [f"{q.query_id} 0 {q.doc_id} {int(q.relevance)}\n" for q in ds.qrels_iter()]
    atomic_write_text(path, "".join(lines))
    logger.info("dataset %s: %d judgments written to %s", data.dataset, len(lines), path)


def queries_source(config: Config) -> str:
    """Where the queries come from, for messages: the queries file, or the dataset (with the file written for it)."""
    q = str(config.data.queries)
    if config.data.dataset and Path(q).parent == Path(CacheLayout.of(config.grading.cache_dir).dataset(Path(q).parent.name)):
        return f"the queries of ir_datasets:{config.data.dataset} ({q})"
    return q


def resolve_dataset(config: Config, download: bool = True) -> Config:
    """``config`` with ``data.queries`` / ``data.qrels`` pointing at files of ``data.dataset`` (written once).

    Keys the config sets itself win. ``download=False`` (validate) raises :class:`DatasetNotLocalError` instead
    of letting ir_datasets download what is not local yet.
    """
    data = config.data
    need_queries = not data.queries
    need_qrels = not data.qrels and data.dataset_qrels != "none"
    if not data.dataset or not (need_queries or need_qrels):
        return config
    ds = load_dataset(data)
    folder = Path(CacheLayout.of(config.grading.cache_dir).dataset(_address(data, ds)))
    updates: dict[str, str] = {}
    if need_queries:
        if not ds.has_queries():
            raise ConfigError(f"data.dataset {data.dataset} has no queries (fix: give data.queries)")
        path = folder / "queries.json"
        if not path.is_file():
            _fetch_note(ds, data, "queries", download)
            _downloading(ds, data, "queries", lambda: _write_queries(ds, data, path))
        updates["queries"] = str(path)
    if need_qrels:
        if ds.has_qrels():
            path = folder / "qrels.txt"
            if not path.is_file():
                _fetch_note(ds, data, "qrels", download)
                _downloading(ds, data, "qrels", lambda: _write_qrels(ds, data, path))
            updates["qrels"] = str(path)
        elif data.dataset_qrels == "required":
            raise ConfigError(f"data.dataset {data.dataset} has no qrels, and data.dataset_qrels is 'required' "
                              "(fix: give data.qrels, pick a dataset with judgments (e.g. a .../judged subset), or "
                              "set data.dataset_qrels: if_any)")
    return config.model_copy(update={"data": data.model_copy(update=updates)})


def docstore_texts(data: DataConfig, wanted: set[str], problems: Problems, download: bool = True) -> dict[str, str]:
    """Texts of the ``wanted`` doc ids from the dataset's docstore (built by ir_datasets on first use)."""
    ds = load_dataset(data)
    if not ds.has_docs():
        problems.add(f"ir_datasets:{data.dataset}", None, "the dataset has no documents",
                     "give the passage texts in data.corpus")
        return {}
    _fetch_note(ds, data, "docs", download)
    docs = _downloading(ds, data, "docs", lambda: ds.docs_store().get_many(sorted(wanted)))
    out: dict[str, str] = {}
    for doc_id, doc in docs.items():
        text = doc_text(doc)
        if not text.strip():
            problems.add(f"ir_datasets:{data.dataset}", None, f"document {doc_id!r} has empty text",
                         "give the passage texts in data.corpus")
            continue
        out[doc_id] = text
    return out
