"""The built-in functions and group methods of the dialect: names, arities and meaning.

The type checker types calls of these; the oracle evaluates them in Python; the runtime compiles
them to Spark Columns. All three must agree with this table. Any of them may be called as a
function `f(x, y)` or as a method `x.f(y)`.

Functions (receiver = first argument):
| name          | arguments                    | result     | meaning                                      |
|---------------|------------------------------|------------|----------------------------------------------|
| len           | string / Vec<T> / Set<T>     | bigint     | characters / elements                        |
| contains      | string, string               | bool       | substring test                               |
| contains      | Vec<T> or Set<T>, T          | bool       | membership                                   |
| is_some       | Option<T>                    | bool       |                                              |
| is_none       | Option<T>                    | bool       |                                              |
| unwrap_or     | Option<T>, T                 | T          | the value, or the default when None          |
| to_string     | bool/integer/float/string    | string     | as `"${x}"` renders it                       |
| abs           | integer or float             | same       |                                              |
| min, max      | T, T (same scalar type)      | T          | two-argument minimum / maximum               |
| starts_with   | string, string               | bool       |                                              |
| ends_with     | string, string               | bool       |                                              |
| to_uppercase  | string                       | string     | ASCII upper case                             |
| to_lowercase  | string                       | string     | ASCII lower case                             |
| trim          | string                       | string     | strip leading/trailing spaces                |
| substr        | string, bigint, bigint       | string     | characters [start, end), 0-based, clamped    |
| push          | Vec<T>, T                    | Vec<T>     | append one element                           |

Group methods (receiver `g: Group<K, V>`, bound by `var g = e.group_by(keys)`; the group's
elements are the values of `e`, one per distinct valuation of the body before `group_by`):
| name           | arguments     | result  | meaning                                              |
|----------------|---------------|---------|------------------------------------------------------|
| count          |               | bigint  | number of elements (duplicates of `e` count)         |
| count_distinct |               | bigint  | number of distinct elements                          |
| sum_of         | lambda V -> N | N       | sum of the lambda over the elements (N numeric)      |
| min, max       |               | V       | smallest / largest element                           |
| arg_min        | lambda V -> T | V       | the element with the smallest lambda value (ties: the smallest element) |
| arg_max        | lambda V -> T | V       | the element with the largest lambda value (ties: the smallest element)  |
| to_set         |               | Set<V>  | distinct elements, sorted                            |
| to_vec         |               | Vec<V>  | all elements, sorted (duplicates kept)               |
| key            |               | K       | the key: the key variable, or a tuple of them when there are several (`()` for none) |
| first          |               | V       | the smallest element                                 |

Operators: arithmetic `+ - * / %` on integers of the same type (bit<N>/signed<N> wrap; `/`
truncates toward zero and `%` takes the sign of the dividend, as in Rust) and on floats; `++`
concatenates strings (and Vecs); `"${x}"` renders scalars like `to_string`; comparisons on any
two values of the same type; `and`/`or`/`not` on bool; `& | ^ ~ << >>` on integers.
"""
from __future__ import annotations

FUNCTIONS: dict[str, tuple[int, ...]] = {
    # name -> allowed argument counts (receiver included)
    "len": (1,),
    "contains": (2,),
    "is_some": (1,),
    "is_none": (1,),
    "unwrap_or": (2,),
    "to_string": (1,),
    "abs": (1,),
    "min": (2,),
    "max": (2,),
    "starts_with": (2,),
    "ends_with": (2,),
    "to_uppercase": (1,),
    "to_lowercase": (1,),
    "trim": (1,),
    "substr": (3,),
    "push": (2,),
}

GROUP_METHODS: dict[str, int] = {
    # name -> number of arguments after the receiver (a lambda where 1)
    "count": 0,
    "count_distinct": 0,
    "sum_of": 1,
    "min": 0,
    "max": 0,
    "arg_min": 1,
    "arg_max": 1,
    "to_set": 0,
    "to_vec": 0,
    "key": 0,
    "first": 0,
}
