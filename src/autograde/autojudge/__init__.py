"""autograde as a TREC AutoJudge judge (docs/autojudge.md): the class the track's runner loads
(:mod:`autograde.autojudge.judge`), the settings and LLM config it maps to an experiment
(:mod:`autograde.autojudge.settings`), the workflow's stages in this process (:mod:`autograde.autojudge.engine`),
leaderboards in the track's formats (:mod:`autograde.autojudge.formats`), and judgments from the track's annotation
page (:mod:`autograde.autojudge.annotate`). The report formats themselves are sources: :mod:`autograde.io.reports`,
:mod:`autograde.io.track_specs`, :mod:`autograde.io.track_checks`, :mod:`autograde.io.track_convert`.
"""
