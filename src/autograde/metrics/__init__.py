"""Evaluation metrics: trec_eval retrieval measures, generation metrics, significance tests.

The evaluation-server part of autograde. :mod:`autograde.metrics.trec` is the single trec_eval wrapper
every leaderboard uses; :mod:`~autograde.metrics.retrieval`, :mod:`~autograde.metrics.generation` and
:mod:`~autograde.metrics.significance` reproduce (and fix, behind options) the reference server.
"""
