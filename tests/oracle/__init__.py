"""The reference evaluator used by the tests: small, slow and obviously correct.

    evaluate(program, inputs) -> every relation's value   (tests/oracle/evaluate.py)
    load_dat(path_or_text, program) -> input relations     (tests/oracle/data.py)
    apply_updates(inputs, [(kind, relation, row), ...])    (tests/oracle/data.py)
"""
from tests.oracle.data import apply_updates, load_dat
from tests.oracle.evaluate import evaluate

__all__ = ["apply_updates", "evaluate", "load_dat"]
