# `make demo` and `make test` work from a fresh clone: each creates .venv when it is
# missing and (re)installs only when pyproject.toml changed since the last install.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
SPEC_HARNESS := ../shared/spec/run_examples.py
# The Tools-page examples delivered so far (the one list; grow it as issues land).
SPEC_EXAMPLES := 01 02 03 04 05 06 07 08 09 10 11 12 13 14 15 16 17 18 19 20 21

.PHONY: demo test lint typecheck unit spec bench bench-stores clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# setuptools warns about editable installs on every build; nothing here is at risk.
QUIET_BUILD := PYTHONWARNINGS="ignore:Editable installation"

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(QUIET_BUILD) $(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(QUIET_BUILD) $(BIN)/python -m pip install -q -e '.[dev]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	$(BIN)/agentkit demo

test: $(VENV)/.installed-dev
	$(BIN)/ruff check agentkit tests bench
	$(BIN)/mypy --strict agentkit
	$(BIN)/python -m pytest -n auto
	@if [ -f $(SPEC_HARNESS) ]; then \
		$(BIN)/python $(SPEC_HARNESS) --python $(BIN)/python -j 2 \
			$(foreach n,$(SPEC_EXAMPLES),-k $(n)_); \
	else \
		echo "spec harness $(SPEC_HARNESS) not present; skipping the Tools-page examples"; \
	fi

bench: $(VENV)/.installed-dev
	$(BIN)/python bench/run.py

bench-stores: $(VENV)/.installed-dev
	$(BIN)/python bench/stores.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
