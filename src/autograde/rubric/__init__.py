"""LLM-RUBRIC: judge-personalized calibration of an LLM's answers to a rubric (Hashemi et al., ACL 2024)."""
