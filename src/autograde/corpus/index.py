"""The corpus index: doc id -> where its line is, one per corpus file, never used stale or damaged.

Built once per corpus file, next to the grade cache, and rebuilt on any doubt (the design below).

One index per corpus file, at ``<cache_dir>/corpus-index/<address>/`` (files: :mod:`autograde.corpus.store`).
The address is a content hash of the file's real path, its size and the sha256 of 34 samples of it (its first and
last 64 KiB and 32 pieces of 4 KiB between: :func:`autograde.corpus.source.fingerprint`), so most changes give a
new address and the index is rebuilt there (the index of the old content is then removed).

**Random access into ``.gz`` without a second copy.** A plain file is read in place at the offset of a line. A
``.gz`` file keeps its gzip form: the build's one pass (rapidgzip) records a checkpoint every ~1 MiB of
compressed data, with the 32 KiB of history decompression needs there, compressed (a gzip member start needs none);
a lookup resumes decompression at the checkpoint before each wanted line. On disk: 16 bytes per passage of entries
plus the checkpoints, instead of the LZ4 copy of the whole corpus earlier releases wrote (sizes and times:
``benchmarks/corpus_lookup.py``, quoted in docs/experiments.md). We chose rapidgzip over indexed_gzip
(``benchmarks/gzip_random_access.py``): its ISA-L decoder is faster than zlib on one core and it decodes in
parallel, which is what a dense pool needs (20,000 ids of 5 M passages fall in nearly every checkpoint span, so
their lookup decompresses nearly the whole file, whatever the spacing an index of this size allows); and it stores
windows compressed, so the same spacing takes a fraction of indexed_gzip's disk (and memory: rapidgzip holds the
imported checkpoints compressed).

**Stale detection, cheap for huge corpora and correct.** Opening an index checks, in this order:

1. the manifest verifies itself (its last field is the sha256 of the rest): a half-written or edited manifest is
   not an index;
2. every file it lists is there with its size; the small ones (fences, block checksums, line counts, gzip
   checkpoints) with their sha256. entries.bin, the large one, is checked block by block
   (crc32 of each 4 KiB block) whenever a lookup reads a block: a truncated, missing or damaged file is found;
3. the corpus file's time stamps (modification and change time, inode) equal those recorded at the build. The
   change time moves on every write and no tool sets it back, so this catches a same-size, same-modification-time
   rewrite that the samples miss. Any difference, or a stamp taken within 3 s of a write (a coarse file system
   clock could hide a second write: git's "racily clean" case), is a doubt, settled by the sha256 of the whole
   file against the one recorded at the build: equal, the new stamp is recorded; different, rebuild;
4. and at lookup time, every line read back must be a whole line (a newline before and after it) of the recorded
   length whose record has the id the entry was made for; anything else
   (:class:`~autograde.corpus.store.StaleIndexError`) rebuilds the index and looks up again, once.

Any doubt rebuilds; the log says why. An open costs a stat, 34 small reads of the corpus file and the checksums of
the small index files; only a doubt reads the whole corpus file (and a rebuild parses it).

Building happens under a lock file per address (``.locks/<address>``, ``flock``: two jobs wanting the same index
build it once; the other waits and uses it) into ``.tmp-<address>-<pid>``, renamed into place when complete; a
failed build removes its folder. A killed build (SIGKILL, a lost node) cannot clean up: the next open of any index
in the same cache removes every temporary folder whose lock no process holds (the kernel drops a dead process's
locks).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograde.core.errors import Problems
from autograde.core.ids import content_hash, file_sha256
from autograde.core.layout import CacheLayout
from autograde.core.log import logger
from autograde.core.text import CHUNK_BYTES
from autograde.corpus.build import build_index
from autograde.corpus.locks import file_lock
from autograde.corpus.passage_store import Capture, PassageStore, remove_store, store_address
from autograde.corpus.source import CHECKPOINT_BYTES, fingerprint, same_stamp
from autograde.corpus.store import INDEX_FORMAT, MANIFEST, CorpusIndex, check_files, read_manifest, write_manifest

CACHE_FIX = "set grading.cache_dir to a folder this job can write"
LOCKS = ".locks"
"""One lock file per index address (held while it is built)."""


def index_root(cache_dir: str | Path) -> Path:
    return Path(CacheLayout.of(cache_dir).corpus_index)


def index_folder(cache_dir: str | Path, fp: dict[str, Any]) -> Path:
    """The content address of a corpus file's index."""
    key = {"format": INDEX_FORMAT, "path": fp["path"], "size": fp["size"], "samples": fp["samples_sha256"]}
    return index_root(cache_dir) / content_hash(key, 32)


def verified(source: str, fp: dict[str, Any], folder: Path) -> tuple[CorpusIndex | None, str]:
    """The index at ``folder`` when it is whole and matches the corpus file now, else ``(None, why not)``."""
    manifest, why = read_manifest(folder)
    if manifest is None:
        return None, why
    recorded = manifest["source"]
    if any(recorded[k] != fp[k] for k in ("path", "size", "samples_sha256")):
        return None, "it indexes other content"
    why = check_files(folder, manifest)
    if why:
        return None, why
    if not same_stamp(recorded["stamp"], fp["stamp"]):
        logger.info("corpus %s: its time stamps differ from those its index recorded (or were too recent to trust): "
                    "checking its content (%.0f MB)", source, fp["size"] / 1e6)
        if file_sha256(fp["path"]) != recorded["sha256"]:
            return None, "its content changed (same size, another checksum)"
        manifest = {**manifest, "source": {**recorded, "stamp": fp["stamp"]}}
        with contextlib.suppress(OSError):  # a read-only cache: checked again next time
            manifest = write_manifest(folder, manifest)
    return CorpusIndex(source, folder, manifest), ""


def open_index(path: str | Path, cache_dir: str | Path, problems: Problems,
               stale: tuple[CorpusIndex, str] | None = None, chunk_bytes: int = CHUNK_BYTES,
               checkpoint_bytes: int = CHECKPOINT_BYTES, capture: Capture | None = None) -> CorpusIndex | None:
    """The verified index of one corpus file, built first when missing, damaged or out of date; None when the file
    has problems. ``stale``: an index found not to match while reading it, and why (rebuilt unless another job
    already did). ``capture``: ids whose records a build puts into the passage store of the file's content (with
    those the store of its previous content held), read in the build's own pass."""
    p = str(path)
    try:
        fp = fingerprint(p)
    except FileNotFoundError:
        problems.add(p, None, "corpus file not found", "check data.corpus")
        return None
    except IsADirectoryError:
        problems.add(p, None, "is a folder, not a corpus file", "name the file")
        return None
    except OSError as exc:
        problems.add(p, None, f"cannot read the corpus file ({exc.strerror or exc})", "check its permissions")
        return None
    folder = index_folder(cache_dir, fp)
    root = folder.parent
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        problems.add(root, None, f"cannot create the corpus index folder ({exc.strerror or exc})", CACHE_FIX)
        return None
    sweep(root)
    if stale is None:
        index, why = verified(p, fp, folder)
        if index is not None:
            return index
    try:
        with _locked(root, folder.name):
            index, why = verified(p, fp, folder)
            if index is not None and (stale is None or index.build_id != stale[0].build_id):
                return index  # built by another job while this one waited
            if stale is not None:
                why = stale[1]
            return _rebuild(p, fp, folder, why, problems, Build(cache_dir, chunk_bytes, checkpoint_bytes, capture))
    except OSError as exc:
        problems.add(root, None, f"cannot write the corpus index ({exc.strerror or exc})", CACHE_FIX)
        return None


@dataclass(frozen=True)
class Build:
    """How to build an index: the cache it goes to, the chunk and checkpoint sizes, the ids to capture."""

    cache_dir: str | Path
    chunk_bytes: int = CHUNK_BYTES
    checkpoint_bytes: int = CHECKPOINT_BYTES
    capture: Capture | None = None


def _rebuild(path: str, fp: dict[str, Any], folder: Path, why: str, problems: Problems, how: Build
             ) -> CorpusIndex | None:
    root = folder.parent
    older = _older_indexes(root, fp["path"], folder)
    if why == "no index yet" and older:
        logger.info("corpus %s changed since its index was built (size or content differ): rebuilding it in %s",
                    path, folder)
    elif why == "no index yet":
        logger.info("corpus %s: building its passage index in %s (once per corpus file; %.0f MB to read)", path,
                    folder, fp["size"] / 1e6)
    else:
        logger.warning("corpus %s: its passage index in %s is not used (%s): rebuilding it", path, folder, why)
    previous = [m for m in (read_manifest(f)[0] for f in [folder, *older]) if m is not None]
    capture = how.capture if how.capture is not None else Capture(set())
    for m in previous:  # what the stores of the file's previous content held is read again from the new content
        capture.extend(PassageStore(how.cache_dir, m).asked())
    tmp = root / f".tmp-{folder.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        manifest = build_index(path, fp, tmp, problems, how.chunk_bytes, how.checkpoint_bytes, capture)
        if manifest is None:
            return None
        _install(tmp, folder)
    except OSError as exc:
        problems.add(root, None, f"cannot write the corpus index ({exc.strerror or exc})", CACHE_FIX)
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    logger.info("corpus %s: indexed %d passages in %.1f s", path, manifest["entries"], manifest["build_seconds"])
    for old in older:
        shutil.rmtree(old, ignore_errors=True)
        (root / LOCKS / old.name).unlink(missing_ok=True)
    for m in previous:
        if store_address(m) != store_address(manifest):
            remove_store(how.cache_dir, m)
    store = PassageStore(how.cache_dir, manifest)
    new = capture.ids - set(store.asked())  # a rebuild of the same content (a damaged index) keeps its store
    if new:
        store.add(new, capture.records(path, bool(manifest["tsv"])))
    return CorpusIndex(path, folder, manifest)


def _install(tmp: Path, folder: Path) -> None:
    """Rename the built index into place; a damaged or stale one there is moved aside first, then removed."""
    old = folder.parent / f".old-{folder.name}-{os.getpid()}"
    if folder.exists():
        os.rename(folder, old)
    try:
        os.rename(tmp, folder)
    except OSError:  # another job (without a lock: a file system without flock) installed one meanwhile
        if not (folder / MANIFEST).is_file():
            raise
    shutil.rmtree(old, ignore_errors=True)


def _older_indexes(root: Path, source: str, keep: Path) -> list[Path]:
    """Other indexes of the same corpus path (built before the file changed, or by an older release)."""
    out = []
    for manifest in root.glob("*/" + MANIFEST):
        if manifest.parent == keep:
            continue
        try:
            recorded = json.loads(manifest.read_text(encoding="utf-8"))
            if (recorded.get("source") or recorded.get("fingerprint") or {}).get("path") == source:
                out.append(manifest.parent)
        except (OSError, ValueError, AttributeError):
            continue
    return out


def _locked(root: Path, name: str, wait: bool = True) -> contextlib.AbstractContextManager[bool]:
    """Hold the lock of one index address; yields whether it is held (False: another process holds it and ``wait``
    is False)."""
    (root / LOCKS).mkdir(exist_ok=True)
    return file_lock(root / LOCKS / name, wait, f"corpus index {root / name}: another job is building it; waiting for it")


def sweep(root: Path) -> None:
    """Remove what killed builds left: every ``.tmp-*`` / ``.old-*`` folder whose address no process has locked."""
    for leftover in [*root.glob(".tmp-*"), *root.glob(".old-*")]:
        address = leftover.name.split("-")[1]
        try:
            with _locked(root, address, wait=False) as held:
                if held:
                    logger.info("corpus index: removing %s, left by a build that was stopped", leftover)
                    shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            continue
