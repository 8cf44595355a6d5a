"""The Python API for PySpark users (`from ddlog.api import Program`); it lives in
ddlog/app/api.py, beside the other surfaces."""
from ddlog.app.api import Program, Rows, UpdateError

__all__ = ["Program", "Rows", "UpdateError"]
