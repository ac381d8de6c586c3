"""Calibrated qrels: relevance labels fitted on human judgments from several graders' outputs, applied to any collection."""
