# `make demo` and `make test` work on a fresh machine with nothing but Python 3.11+:
# they create .venv, install the pinned dependencies (requirements.lock, installed with
# --no-deps so that nothing outside the lock is resolved), then run.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SHARED_DATA ?= $(abspath ../shared/data)

.PHONY: install browser demo lint test test-fast bench clean

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

# The HTML report's browser tests drive Debian's chromium through Playwright (no browser
# download): install it with apt-get when missing; without apt this fails loudly, so the
# browser tests never skip silently.
browser:
	@command -v chromium >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) ; } \
		|| { echo "error: chromium is missing and apt-get could not install it;" \
			"the HTML report's browser tests need Debian's chromium" >&2; exit 1; }
	@command -v chromium >/dev/null 2>&1 || { echo "error: chromium not found after install" >&2; exit 1; }

# Every test, the slow ones (a real model, many calls, demo scans) included.
test: lint browser
	PROBEGUARD_SHARED_DATA=$(SHARED_DATA) $(BIN)/python -m pytest -q -p no:cacheprovider

# The fast tier: everything not marked slow.
test-fast: lint browser
	PROBEGUARD_SHARED_DATA=$(SHARED_DATA) $(BIN)/python -m pytest -q -p no:cacheprovider -m "not slow"

bench: install
	PROBEGUARD_SHARED_DATA=$(SHARED_DATA) $(BIN)/python -m benchmarks.run_all

clean:
	rm -rf $(VENV) runs .probeguard-cache .mypy_cache
