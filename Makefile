# Two commands do all the set-up on a fresh machine (Python 3.11 and a JDK):
#   make demo   run an example program end to end
#   make test   run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m ddlog.app.demo

test: $(STAMP)
	$(BIN)/python -m pytest -q tests

# the JVM-free tier (parser, checker, planner, oracle, layout): seconds
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

bench: $(STAMP)
	$(BIN)/python bench/run.py reach --edges 100000

clean:
	rm -rf $(VENV) build *.egg-info
