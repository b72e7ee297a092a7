# Two entry points: `make demo` plays a match, `make test` runs the suite.
# Each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The import contracts run from their own venv (see the `lint` extra in pyproject.toml).
LINT_VENV := .venv-lint

.PHONY: demo test lint venv clean mutants

$(BIN)/cogolf: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(BIN)/cogolf

$(LINT_VENV)/bin/lint-imports: pyproject.toml
	test -x $(LINT_VENV)/bin/python || $(PYTHON) -m venv $(LINT_VENV)
	$(LINT_VENV)/bin/python -m pip install --quiet -e '.[lint]'
	touch $@

# The test suite also runs league nights on Ray.
$(VENV)/.with-ray: $(BIN)/cogolf
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $@

venv: $(BIN)/cogolf

# Mutation testing (slow, never part of `make test`): `make mutants [MODULES=cogolf/values.py]`
# runs mutmut module by module and rewrites MUTANTS.md's table.
$(VENV)/.with-mutants: $(BIN)/cogolf
	$(BIN)/python -m pip install --quiet -e '.[dev,mutants]'
	touch $@

mutants: $(VENV)/.with-mutants
	CI=1 $(BIN)/python tools/mutants.py $(MODULES)

demo: venv
	$(BIN)/cogolf play

test: $(VENV)/.with-ray $(LINT_VENV)/bin/lint-imports
	$(BIN)/ruff check cogolf tests
	$(LINT_VENV)/bin/lint-imports
	$(BIN)/python -m pytest -n 2 -q

lint: venv $(LINT_VENV)/bin/lint-imports
	$(BIN)/ruff check cogolf tests
	$(LINT_VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) $(LINT_VENV) .pytest_cache .mutants
