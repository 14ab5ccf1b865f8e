# `make demo` and `make test` work on a fresh machine with nothing but Python 3.11+:
# they create .venv, install the pinned dependencies (requirements.lock, installed with
# --no-deps so that nothing outside the lock is resolved), then run.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SHARED_DATA ?= $(abspath ../shared/data)

.PHONY: install demo lint test test-fast bench clean

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $(STAMP)

install: $(STAMP)

demo: install
	$(BIN)/probeguard scan --demo --out runs/demo

# Lint: ruff (lint + format), the import contract (layers), mypy (strict for core, stats and
# metrics; settings in pyproject.toml).
lint: install
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/lint-imports
	$(BIN)/mypy

# Every test, the slow ones (a real model, many calls, demo scans) included.
test: lint
	PROBEGUARD_SHARED_DATA=$(SHARED_DATA) $(BIN)/python -m pytest -q -p no:cacheprovider

# The fast tier: everything not marked slow.
test-fast: lint
	PROBEGUARD_SHARED_DATA=$(SHARED_DATA) $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow"

bench: install
	PROBEGUARD_SHARED_DATA=$(SHARED_DATA) $(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) runs .probeguard-cache .mypy_cache
