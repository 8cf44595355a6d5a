"""What a built-in function or group method is: one `Builtin` entry holds everything about it,
its signature, its type rule, its lowering to Spark Columns and its meaning on Python values.

The entries know no checker, no Spark and no oracle: each stage hands them what they need.
- The type rule gets an `Args` (ddlog/check/exprs.py makes one per call) and returns the
  result type, typing the arguments through it.
- The Spark lowering gets a `Lowering` toolkit (runtime/expr.py makes it; it carries
  pyspark.sql.functions as `F` and the helpers every lowering shares), the arguments as
  Columns (a lambda argument as a Column -> Column function), their types and the result type.
- The Python meaning gets the argument values (a lambda as a Python function), their types and
  the result type; tests/oracle evaluates with it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Protocol

if TYPE_CHECKING:
    from ddlog.types import Type


class Args(Protocol):
    """A call being typed, as a type rule sees it (argument 0 is the receiver of a method)."""

    def count(self) -> int: ...
    def arity(self, n: int | tuple[int, ...]) -> None: ...  # require that many arguments
    def infer(self, i: int, hint: "Type | None" = None) -> "Type": ...
    def check(self, i: int, t: "Type") -> "Type": ...
    def want(self, i: int, ok: bool, desc: str) -> None: ...
    def flexible(self, i: int) -> bool: ...
    def same(self, hint: "Type | None", ok: Callable[["Type"], bool], desc: str) -> "Type": ...
    def lambda_body(self, i: int, *params: "Type", hint: "Type | None" = None,
                    changes: int | None = None) -> "Type": ...  # changes: its `mut` parameter
    def lambda_arity(self, i: int) -> int | None: ...  # a closure's parameters, if written
    def fail(self, message: str, i: int | None = None) -> NoReturn: ...


class Lowering(Protocol):
    """The Spark toolkit a lowering uses (runtime/expr.py provides it)."""

    F: Any  # pyspark.sql.functions
    in_closure: bool  # lowering the body of a closure (a higher-order function's lambda)

    def lit(self, value: Any, t: "Type") -> Any: ...
    def value(self, v: Any, t: "Type") -> Any: ...  # a constant of any type (ddlog/values)
    def spark_type(self, t: "Type") -> Any: ...
    def wrap(self, c: Any, t: "Type") -> Any: ...
    def arith(self, op: str, a: Any, b: Any, t: "Type") -> Any: ...  # + - * in the type
    def u64_from_decimal(self, d: Any) -> Any: ...  # a decimal's bit<64>, null outside
    def compare(self, a: Any, b: Any, op: str, t: "Type") -> Any: ...
    def order_key(self, c: Any, t: "Type") -> Any: ...  # Spark's order of it is DDlog's
    def sort(self, arr: Any, elem: "Type") -> Any: ...  # in DDlog's order of the elements
    def to_string(self, c: Any, t: "Type") -> Any: ...
    def float_json(self, c: Any, t: "Type") -> Any: ...  # as serde_json writes a float
    def hex(self, c: Any, t: "Type") -> Any: ...  # an integer's digits, as Rust's `{:x}`
    def abs(self, c: Any, t: "Type") -> Any: ...  # a number's absolute value (wraps)
    # the integer wider than 64 bits whose upper and lower 64 bits the Longs hold
    def int_from_words(self, hi: Any, lo: Any, t: "Type") -> Any: ...
    # XXH64 of the bytes Rust's Hash writes for a bool or fixed-width integer, as a u64's bits
    def xxhash64(self, c: Any, t: "Type", seed: int) -> Any: ...
    def canonical_set(self, arr: Any, t: "Type") -> Any: ...  # t: the Set type
    def canonical_map(self, arr: Any, t: "Type") -> Any: ...  # entries in order (last wins)
    def let(self, value: Any, body: Callable[[Any], Any]) -> Any: ...  # value computed once


TypeRule = Callable[[Args, "Type | None"], "Type"]
SparkFn = Callable[[Lowering, list, list, "Type"], Any]
PythonFn = Callable[[list, list, "Type"], Any]


@dataclass(frozen=True)
class Builtin:
    """One built-in function (`f(x, y)` or `x.f(y)`) or group method (`g.f(...)`)."""

    name: str
    arity: int | tuple[int, ...]  # arguments, the receiver included (or each count allowed)
    signature: str  # shown in messages
    meaning: str  # one line, for the documentation
    type_rule: TypeRule
    spark: SparkFn
    python: PythonFn
    group: bool = False  # a method of Group<K, V> (bound by group_by)
    # its lowering reads `Lowering.in_closure`: it lowers otherwise inside a Spark lambda, so
    # an expression holding it is not moved into one for the sake of binding a value
    closure_aware: bool = False
    # its lowering knows the two-word form of integers wider than 64 bits (runtime/wide.py);
    # a built-in without it refuses them where it asks for an integer
    wide_integers: bool = False
    # the arguments that must be constants (a format string, read when the program is
    # compiled): the lowering gets their Python values in place of Columns
    constants: tuple[int, ...] = ()
    # its lowering reads an argument several times: the compiler computes each computed
    # argument once, first
    reads_arguments_often: bool = False

    @property
    def arities(self) -> tuple[int, ...]:
        return self.arity if isinstance(self.arity, tuple) else (self.arity,)


def fixed(*params: "Type", result: "Type") -> TypeRule:
    """The type rule of a built-in whose parameters and result have these types."""
    def rule(a: Args, hint) -> "Type":
        for i, t in enumerate(params):
            a.check(i, t)
        return result
    return rule


def result_column(sx: Lowering, ok: Any, value: Any, err: Any, ty: "Type") -> Any:
    """A Column of ddlog_std's `Result` (type `ty`): `Ok{value}` where `ok` holds, else
    `Err{err}`, in the Spark form of a type of several constructors (ddlog/builtins/
    ddlog_std.dl declares it): a `_tag` and one struct per constructor."""
    F = sx.F
    return F.struct(F.when(ok, F.lit("Ok")).otherwise(F.lit("Err")).alias("_tag"),
                    F.when(ok, F.struct(value.alias("res"))).alias("Ok"),
                    F.when(~ok, F.struct(err.alias("err"))).alias("Err")
                    ).cast(sx.spark_type(ty))
