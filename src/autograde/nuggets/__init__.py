"""Nugget evaluation of RAG answers as the TREC RAG track does it (importance, assignment, All / Vital / Weighted).

- :mod:`autograde.grading.nugget_labels`: the label sets (vital/okay; support/partial_support/not_support) and the mapping
  of any 0-5 grade to the three assignment labels by two thresholds.
- :mod:`autograde.metrics.nuggets`: the nugget scores as registered measures, per answer and per run.
- :mod:`autograde.nuggets.interchange`: the track's assignment JSONL and the reference scorer's output.
- :mod:`autograde.config.nuggets`: the ``nuggets:`` config section.
- :mod:`autograde.nuggets.importance`: importance per nugget (the bank's, or labelled by a model, cached).
- :mod:`autograde.nuggets.assign`: assignment of nuggets to whole answers (cached, sharded) or from a grader's
  passage grades.
- :mod:`autograde.nuggets.stages`: the workflow stages; :mod:`autograde.nuggets.workflow` the rules' functions.
"""
