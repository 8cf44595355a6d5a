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
	$(BIN)/ddlog demo

# Two workers (one per core here), each test file on one of them: a worker's SparkSession
# leaves part of a core idle while it plans, and the e2e tier's commands start JVMs of their
# own. On this 2-core machine the suite took 30.2 min this way, 40.8 min in one process.
test: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --dist loadfile tests

# the JVM-free tier (parser, checker, planner, oracle, layout): seconds
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q tests/unit

bench: $(STAMP)
	$(BIN)/python bench/run.py reach --edges 100000

clean:
	rm -rf $(VENV) build *.egg-info
