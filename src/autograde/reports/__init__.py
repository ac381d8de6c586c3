"""Phase 3 verification reports and the review site.

- :mod:`~autograde.reports.verify`: verify grading, the grid's passage labels, missing in test bank, spurious
  entries (Dietz, SIGIR 2024, sections 3.3, 4.4 and 6);
- :mod:`~autograde.reports.impact`: how the leaderboard moves when one test item is removed;
- :mod:`~autograde.reports.agreement`: confusion tables and Cohen's kappa against human judgments (Table 5);
- :mod:`~autograde.reports.correlation`: Spearman, Kendall tau-b and tau-ap against the official leaderboard
  with seeded bootstrap intervals over queries, and scatter plots;
- :mod:`~autograde.reports.site`: the static HTML site under ``results/site``;
- :mod:`~autograde.reports.stages`: the stage functions the rule scripts and the CLI call.
"""
