"""Passage texts by id, never by scanning the corpus: the corpus index (``index``, ``parse``, ``lookup``) and the
choice between corpus files and an ir_datasets docstore (``passages``)."""
