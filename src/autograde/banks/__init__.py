"""Test banks, Phase 1: generating exam questions and nuggets with an LLM, and the tools to edit, compare, merge,
import and export banks.

- :mod:`autograde.config.banks`: the ``bank_generation:`` config section (one entry per generated bank).
- :mod:`autograde.banks.parse`: items out of an LLM answer (JSON or list lines) and their validation.
- :mod:`autograde.banks.generate`: the generator (backend calls through the cache, repair prompts, failures).
- :mod:`autograde.banks.stages`: the workflow stages (one generation shard, the merged bank) and their digests.
- :mod:`autograde.io.banks.formats`: import / export (workbench, TQA, TREC RAG 24 nuggetizer, AutoJudge, TSV).
- :mod:`autograde.banks.tools`: stats, diff and merge of banks.
"""
