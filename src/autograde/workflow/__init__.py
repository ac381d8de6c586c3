"""The application layer of the workflow: the context the Snakefile builds, the checks before any job, pre-flight checks and the run plan."""
