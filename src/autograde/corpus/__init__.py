"""Passage texts by id, never by scanning the corpus: the corpus index and where the pool's texts come from.

The index: ``index`` (find, verify, rebuild), ``build`` (one pass), ``parse`` (chunks to entries), ``source`` (the
corpus file: fingerprint, plain or gzip reads), ``store`` (files and manifest), ``lookup`` (ids to texts); and
``passages``: corpus files or an ir_datasets docstore.
"""
