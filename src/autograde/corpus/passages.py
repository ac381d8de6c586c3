"""Where the pool's passage texts come from: the corpus files (through their index) or the dataset's docstore."""

from __future__ import annotations

from typing import TYPE_CHECKING

from autograde.core.errors import Problems

if TYPE_CHECKING:
    from autograde.config.model import Config


def passage_source(config: Config) -> str:
    """The passage source in words, for messages (the corpus files, or the dataset's docstore)."""
    if config.data.corpus:
        return ", ".join(config.data.corpus)
    if config.data.dataset:
        return f"the docstore of ir_datasets:{config.data.dataset}"
    return "data.corpus"


def lookup_passages(config: Config, wanted: set[str], problems: Problems, download: bool = True) -> dict[str, str]:
    """Texts of the ``wanted`` passage ids: ``data.corpus`` when given, else the docstore of ``data.dataset``.

    Nothing scans the corpus: files are read through their index (:func:`autograde.corpus.lookup.lookup_corpus`,
    built once per file under ``grading.cache_dir``), datasets through ir_datasets' docstore. Ids without text are
    absent from the result (the pool reports them).
    """
    if config.data.corpus:
        from autograde.core.paths import expand_globs
        from autograde.corpus.lookup import lookup_corpus

        return lookup_corpus(expand_globs(config.data.corpus), wanted, config.grading.cache_dir, problems)
    if config.data.dataset:
        from autograde.io.irds import docstore_texts

        return docstore_texts(config.data, wanted, problems, download)
    return {}
