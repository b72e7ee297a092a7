# Two entry points: `make demo` plays a match, `make test` runs the suite.
# Each creates .venv on first use.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint venv clean

$(BIN)/cogolf: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(BIN)/cogolf

# The test suite also runs league nights on Ray.
$(VENV)/.with-ray: $(BIN)/cogolf
	$(BIN)/python -m pip install --quiet -e '.[dev,ray]'
	touch $@

venv: $(BIN)/cogolf

demo: venv
	$(BIN)/cogolf play

test: $(VENV)/.with-ray
	$(BIN)/ruff check cogolf tests
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 -q

lint: venv
	$(BIN)/ruff check cogolf tests
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache
