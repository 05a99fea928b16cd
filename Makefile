# Two commands on a fresh machine with only Python and make:
#   make run    create .venv, install, and run the main job on a temporary store
#   make test   create .venv if needed, install with test extras, run lint and the whole suite

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test lint install bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

run: $(VENV)/.installed
	$(BIN)/python -m auto_dream.demo

test: lint
	$(BIN)/python -m pytest -q

# ruff: pyflakes, pycodestyle and import order (pyproject [tool.ruff]); mypy and an
# architecture test join it with the layers of issue 14.
lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench

bench: $(VENV)/.installed
	$(BIN)/python bench/append.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .hypothesis
