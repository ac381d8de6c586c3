"""Rebuild the papers' tables from public data and set them next to the published values (``make reproduce``).

- :mod:`~autograde.reproduce.config`: the plan (``config/reproduce/reproduce.yaml``): tables, inputs, settings.
- :mod:`~autograde.reproduce.papers`: the published values, one YAML per paper (``config/reproduce/papers/``).
- :mod:`~autograde.reproduce.workbench`, :mod:`~autograde.reproduce.rubric_tables`,
  :mod:`~autograde.reproduce.parity`: each table measured by the tool's own stages.
- :mod:`~autograde.reproduce.compare`, :mod:`~autograde.reproduce.site`: paper vs ours (Markdown, JSON, HTML).
- :mod:`~autograde.reproduce.stages`: the functions the rules and ``autograde reproduce`` call.
"""
