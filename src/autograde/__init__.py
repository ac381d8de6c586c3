"""autograde: evaluate retrieval and RAG systems with LLM autograding (Rubric / EXAM++ / LLM-RUBRIC).

Every stage is a plain typed function over files or dataframes; the Snakemake workflow and the
``autograde`` CLI are thin wrappers around them.
"""

__version__ = "0.1.0"
