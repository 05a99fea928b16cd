# Two commands on a fresh machine with only Python and make:
#   make run    create .venv, install, and run the main job on a temporary store
#   make test   create .venv if needed, install with test extras, run lint and the whole suite
#   make lint   the guardrails alone: ruff, mypy and the import contracts (pyproject.toml)
#   make test-fast  the suite without the slow torture and subprocess-heavy tests (marked `slow`)

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: run test test-fast lint install bench clean

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

# test-fast writes bytecode even where PYTHONDONTWRITEBYTECODE is set: pytest keeps each test module
# with its asserts rewritten beside it (tests/__pycache__, ignored by git), so the next run does not
# rewrite and compile them all again (8 of its seconds).
test-fast: $(VENV)/.installed-test
	PYTHONDONTWRITEBYTECODE= AUTO_DREAM_TESTS=fast $(BIN)/python -m pytest -q -m "not slow"

# ruff: pyflakes, pycodestyle and import order ([tool.ruff]); mypy: types ([tool.mypy]);
# lint-imports: the layers and the imports CONTRIBUTING.md's style rules forbid ([tool.importlinter]).
lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache --no-logo

bench: $(VENV)/.installed
	$(BIN)/python bench/append.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .hypothesis .mypy_cache
