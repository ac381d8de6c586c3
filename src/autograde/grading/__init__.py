"""Grading: one interface (:mod:`autograde.grading.base`), one backend registry, a content cache."""
