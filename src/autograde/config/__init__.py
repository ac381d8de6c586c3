"""The experiment config and its checks: one pydantic model per section, loading and validation, the config reference."""
