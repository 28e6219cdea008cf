# Two commands set everything up on a fresh machine:
#   make run    creates .venv, installs slca, runs `slca run` (embedded default: synthetic data, tiny backbone, CPU)
#   make test   creates .venv with the test extras and the real engines' environments, runs the whole test suite
# Extra arguments: make run ARGS="estimator=grpo"   make test PYTEST_ARGS="tests/config -x"
# The inner loop: make test-fast (every unit and contract test, no real-engine run).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch first, pinned: here it is a local CPU build, and nothing later may pull a CUDA build.
TORCH := torch==2.13.0
# LLaMA-Factory's own requirements pull a CUDA torch; the tests need only its data loader, whose
# imports (datasets, peft, accelerate, ...) verl already brings, so it is installed without dependencies.
LLAMAFACTORY := llamafactory==0.9.5
# BFCL's data, gold answers and checkers; its own requirements are every vendor SDK it can call, none of
# which the data or the checkers need, so it too is installed without dependencies (mpmath, which its
# multi-turn environments need, is in the test extra).
BFCL := bfcl-eval==2026.3.23

# LLaMA-Factory's trainer runs from its own environment (its pins clash with ours); the backend's
# tests build it once with this script and reuse it.
LLAMAFACTORY_ENV := .cache/llamafactory-env
# τ²-bench runs from its own Python >= 3.12 environment (litellm's pins clash with ours; the script finds
# the interpreter); the tau2 benchmark and its tests build it once with this script and reuse it.
TAU2_ENV := .cache/tau2-env
# ACEBench's evaluation code (vendored, run only to check slca's ACEBench checker) imports pandas and
# openpyxl, which slca's environment does not carry: it runs from its own environment.
ACEBENCH_ENV := .cache/acebench-env
# pytest-xdist workers: one per core of the 2-core reference machine (0 runs the suite in one process).
# tests/lanes.py keeps the tests of one expensive fixture on one worker and starts the long runs first.
PYTEST_WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup
# Python's bytecode caches are written even where the machine sets PYTHONDONTWRITEBYTECODE (this one
# does): without them every process of a run recompiles slca, and every pytest worker rewrites the
# asserts of every test module again (test-fast's collection: 14 s -> 8 s per worker).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test test-fast test-envs system-packages venv clean llamafactory-env tau2-env acebench-env real-models

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH)

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[test,verl,launch]"
	$(BIN)/python -m pip install -q --no-deps $(LLAMAFACTORY)
	$(BIN)/python -m pip install -q --no-deps $(BFCL)
	touch $@ $(VENV)/.installed-run

venv: $(VENV)/.installed-run

llamafactory-env:
	scripts/build_llamafactory_env.sh $(LLAMAFACTORY_ENV) $(PYTHON)

tau2-env:
	scripts/build_tau2_env.sh $(TAU2_ENV)

acebench-env:
	scripts/build_acebench_env.sh $(ACEBENCH_ENV) $(PYTHON)

# Qwen's tokenizers and SmolLM2's weights, fetched by exact version and checked against their digests.
real-models:
	scripts/fetch_real_models.sh .cache/real-models $(PYTHON)

# Debian packages of the real-engine tests (SLURM, munge, Chromium), installed when missing.
system-packages:
	scripts/install_test_system_packages.sh

# Everything the suite runs besides slca, built at once (in parallel) and outside the timed tests; each
# piece is skipped when current and rebuilt only when its pins change.
test-envs:
	$(MAKE) --no-print-directory -j4 $(VENV)/.installed-test llamafactory-env tau2-env acebench-env system-packages real-models

run: $(VENV)/.installed-run
	$(BIN)/slca run $(ARGS)

test: test-envs
	$(PYTEST) $(PYTEST_ARGS)

test-fast: $(VENV)/.installed-test
	$(PYTEST) -m "not slow" $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
