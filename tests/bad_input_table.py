"""The op table of the bad-input property tests: for every public op, how to generate its arguments.

Shared by tests/unit/test_bad_input.py (numpy backend: the outcome contract and a NumPy reference) and
tests/all/test_bad_input_differential.py (the same calls on numpy and torch). It is importable from both
because tests/conftest.py sits in tests/, which pytest's default import mode puts on ``sys.path``.

Each ``OpSpec`` draws ``Call`` objects: arguments as host values (numpy arrays become tensors on the backend
under test; everything else is passed as it is), valid and invalid alike: shapes up to rank 6 with zero-size
dimensions, every dtype, axes in and out of range, repeated or of the wrong type, attrs of the wrong kind or
value, shapes that do not broadcast. A spec's ``reference`` computes the expected result with NumPy alone
(independently of tensorplug), raises ``Refused`` where NumPy itself refuses the call (tensorplug must then
raise too), or returns None where no cheap reference exists.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import os
import re
import warnings as warnings_module
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import strategies as st

import tensorplug as tp
from tensorplug.kernel_reference import REFERENCE, KernelEntry
from tensorplug.ops import _nn
from tensorplug.testing._conformance import _to_tensors

DTYPES = ("float32", "float64", "int32", "int64", "bool")
FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int32", "int64")
NUMERIC_DTYPES = FLOAT_DTYPES + INT_DTYPES

_FLOAT_POOL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 100.0, 1e-3, -7.0, 2.0, np.nan, np.inf, -np.inf, 1e30])
_INT_POOL = np.array([0, 1, -1, 2, -3, 5, 7, 100, -100, 3])


class Refused(Exception):
    """The NumPy reference refuses the call: tensorplug must raise a TensorplugError for it too."""


@dataclass(frozen=True)
class Raw:
    """An argument passed to the op as it is (a numpy array that must not become a tensor first, say)."""

    value: Any


@dataclass
class Call:
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array({v.dtype}{list(v.shape)}: {v.ravel()[:6].tolist()})"
            if isinstance(v, list | tuple) and v and all(isinstance(u, np.ndarray) for u in v):
                return "[" + ", ".join(show(u) for u in v) + "]"
            return repr(v)

        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return f"({', '.join(parts)})"


Reference = Callable[..., Any]


@dataclass(frozen=True)
class OpSpec:
    name: str  # the public op, tp.<name> (the name its messages must carry)
    fn: Callable[..., Any]
    kernels: tuple[str, ...]  # catalogue kernels this op dispatches
    calls: st.SearchStrategy[Call]
    reference: Reference | None = None  # reference(*args, **kwargs) on numpy arrays
    inner: tuple[str, ...] = ()  # ops a composite calls, whose names its messages may carry instead
    random: bool = False  # values are random draws: compare shapes and dtypes only


# -- generators -------------------------------------------------------------------------------

_DIM = st.sampled_from((0, 1, 1, 2, 2, 3, 3, 4))


def shapes(min_rank: int = 0, max_rank: int = 6) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(_DIM, min_size=min_rank, max_size=max_rank).map(tuple)


def fill_array(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    size = math.prod(shape)
    if dtype in FLOAT_DTYPES:
        values = rng.choice(_FLOAT_POOL, size) if seed % 3 else rng.standard_normal(size) * 3
    elif dtype in INT_DTYPES:
        values = rng.choice(_INT_POOL, size)
    else:
        values = rng.integers(0, 2, size).astype(bool)
    with np.errstate(all="ignore"):
        return np.asarray(values).astype(dtype).reshape(shape)


@st.composite
def arrays(
    draw: Any, dtypes: Sequence[str] = DTYPES, shape: Any = None, min_rank: int = 0, max_rank: int = 6
) -> np.ndarray:
    dtype = draw(st.sampled_from(tuple(dtypes)))
    if shape is None:
        shape = draw(shapes(min_rank, max_rank))
    return fill_array(tuple(shape), dtype, draw(st.integers(0, 2**16)))


@st.composite
def index_arrays(draw: Any, shape: tuple[int, ...], high: int) -> np.ndarray:
    """An int32/int64 index array, mostly in [0, high), sometimes out of range or negative."""
    dtype = draw(st.sampled_from(INT_DTYPES + INT_DTYPES + ("float32", "bool")))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    high = min(max(high, 1), 100)
    low, top = (-2, high + 2) if draw(st.integers(0, 4)) == 0 else (0, high)
    return rng.integers(low, top, math.prod(shape)).astype(dtype).reshape(shape)


@st.composite
def broadcast_partner(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with ``shape`` (mostly) or does not (sometimes)."""
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return shape
    if kind == 1:
        return shape[draw(st.integers(0, len(shape))) :]
    if kind == 2:
        return tuple(1 if draw(st.booleans()) else d for d in shape)
    if kind == 3:
        return (*draw(shapes(0, 2)), *shape)
    return draw(shapes())


def scalars() -> st.SearchStrategy[Any]:
    return st.sampled_from([0, 1, -2, 3, 2.5, -0.0, 0.5, math.nan, math.inf, True, False, 2**40, 1e40])


def bad_values() -> st.SearchStrategy[Any]:
    """Attr values of the wrong kind."""
    return st.sampled_from(["a", None, 1.5, [[0]], (), object(), {"k": 1}, True, -1, np.float32(2.0), 10**20])


def axes_for(rank: int) -> st.SearchStrategy[Any]:
    """Reduction axes: None, ints in and out of range, tuples and lists (repeats included), wrong kinds."""
    one = st.integers(-rank - 2, rank + 1)
    return st.one_of(
        st.none(),
        one,
        st.lists(st.integers(-rank - 1, rank), max_size=3).map(tuple),
        st.lists(st.integers(-rank, max(rank - 1, 0)), max_size=2),
        st.sampled_from(["0", 1.5, True, [[0]], np.int64(0), (0.0,)]),
    )


def axis_for(rank: int) -> st.SearchStrategy[Any]:
    """One axis: ints in and out of range, or a wrong kind."""
    return st.one_of(st.integers(-rank - 2, rank + 1), st.sampled_from(["0", 1.5, None, (0,), True, np.int32(0)]))


def dtype_names() -> st.SearchStrategy[Any]:
    return st.sampled_from([*DTYPES, *DTYPES, "float16", "complex64", "uint8", "int", None, 3, np.float64, float])


def shape_args(near: tuple[int, ...] = ()) -> st.SearchStrategy[Any]:
    """A shape attr: valid ones (often related to ``near``), negative dims, wrong kinds."""
    return st.one_of(
        shapes(0, 5),
        st.just(near),
        st.just(tuple(reversed(near))),
        st.sampled_from([(-1,), (2, -1), (-2, 3), (1.5,), ("a",), "abc", None, 3, np.int64(2), (True, 2), (2**62,)]),
    )


# -- reference helpers --------------------------------------------------------------------------


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return run


def is_float(a: np.ndarray) -> bool:
    return a.dtype.kind == "f"


def as_float(a: np.ndarray) -> np.ndarray:
    return a if is_float(a) else a.astype(np.float32)


def refuse_bool(*arrays_: np.ndarray) -> None:
    if any(a.dtype == bool for a in arrays_):
        raise Refused("bool operand")


def weak_dtype(value: Any, other: str) -> str:
    """The dtype a Python scalar takes beside a tensor of dtype ``other`` (KERNELS.md: scalars are weak)."""
    if isinstance(value, bool):
        return other
    if isinstance(value, int):
        return other if other != "bool" else "int32"
    return other if other in FLOAT_DTYPES else "float32"


_UPCAST_ORDER = ("bool", "int32", "int64", "float32", "float64")


def result_type(*arrays_: np.ndarray) -> np.dtype[Any]:
    """The dtype tensors promote to, as TensorFlow.js upcasts: the highest of bool < int32 < int64 < float32 <
    float64, so an integer meeting a float takes the float's dtype (where NumPy's table gives float64)."""
    return np.dtype(max((a.dtype.name for a in arrays_), key=_UPCAST_ORDER.index))


def operands(a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Two operands converted and promoted as the binary ops document (the TensorFlow.js upcast, weak scalars)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        dtype = result_type(a, b)
    elif isinstance(a, np.ndarray):
        dtype = np.dtype(weak_dtype(b, a.dtype.name))
    elif isinstance(b, np.ndarray):
        dtype = np.dtype(weak_dtype(a, b.dtype.name))
    else:
        dtype = np.dtype("float32" if isinstance(a, float) else "bool" if isinstance(a, bool) else "int32")
        dtype = np.dtype(weak_dtype(b, dtype.name))
    return convert(a, dtype), convert(b, dtype)


def convert(value: Any, dtype: np.dtype[Any]) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value.astype(dtype)
    if dtype.kind in "iu" and isinstance(value, int) and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        raise Refused(f"{value} does not fit {dtype}")
    with np.errstate(all="ignore"):
        return np.array(value).astype(dtype)


def plain_axes(axis: Any) -> Any:
    """tensorplug takes lists of axes where NumPy wants tuples; bools are not axes."""
    if isinstance(axis, bool | np.bool_):
        raise Refused("a bool axis")
    if isinstance(axis, list):
        axis = tuple(axis)
    if isinstance(axis, tuple) and any(isinstance(a, bool) for a in axis):
        raise Refused("a bool axis")
    return axis


def numpy_or_refuse(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn``'s result, or Refused where NumPy raises (its refusal: tensorplug must refuse too)."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)
    except (ValueError, TypeError, IndexError, OverflowError) as exc:
        raise Refused(f"{type(exc).__name__}: {exc}") from exc


# -- elementwise unary ----------------------------------------------------------------------------


def _float_ref(f: Callable[[np.ndarray], np.ndarray], in_float64: bool = False) -> Reference:
    def ref(x: np.ndarray) -> np.ndarray:
        x = as_float(x)
        with np.errstate(all="ignore"):
            return np.asarray(f(x.astype(np.float64)) if in_float64 else f(x)).astype(x.dtype)

    return ref


def _numeric_ref(f: Callable[[np.ndarray], np.ndarray]) -> Reference:
    def ref(x: np.ndarray) -> np.ndarray:
        refuse_bool(x)
        with np.errstate(all="ignore"):
            return np.asarray(f(x)).astype(x.dtype)

    return ref


def _any_ref(f: Callable[[np.ndarray], np.ndarray]) -> Reference:
    return lambda x: f(x)


def _sign(x: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(x), 0, np.sign(x)) if is_float(x) else np.sign(x)


def _logical_not(x: np.ndarray) -> np.ndarray:
    if x.dtype != bool:
        raise Refused("logical_not of a non-bool tensor")
    return np.logical_not(x)


# The NumPy reference of an attr-less unary kernel whose kernel reference entry gives no ``numpy`` formula, or whose
# result NumPy computes in the input's dtype rather than in float64 (see _unary_rows).
_UNARY_REFS: dict[str, Reference] = {
    "Abs": _numeric_ref(np.abs),
    "Neg": _numeric_ref(np.negative),
    "Square": _numeric_ref(np.square),
    "Sign": _numeric_ref(_sign),
    "Relu": _numeric_ref(lambda x: np.maximum(x, 0)),
    "Relu6": _numeric_ref(lambda x: np.clip(x, 0, 6)),
    "Ceil": _numeric_ref(np.ceil),
    "Floor": _numeric_ref(np.floor),
    "Round": _numeric_ref(np.round),
    "Exp": _float_ref(np.exp),
    "Expm1": _float_ref(np.expm1),
    "Log": _float_ref(np.log),
    "Log1p": _float_ref(np.log1p),
    "Sqrt": _float_ref(np.sqrt),
    "Reciprocal": _float_ref(np.reciprocal),
    "Sin": _float_ref(np.sin),
    "Cos": _float_ref(np.cos),
    "Tan": _float_ref(np.tan),
    "Asin": _float_ref(np.arcsin),
    "Acos": _float_ref(np.arccos),
    "Atan": _float_ref(np.arctan),
    "Tanh": _float_ref(np.tanh),
    "Asinh": _float_ref(np.arcsinh),
    "Acosh": _float_ref(np.arccosh),
    "Atanh": _float_ref(np.arctanh),
    "IsNan": _any_ref(np.isnan),
    "IsInf": _any_ref(np.isinf),
    "IsFinite": _any_ref(np.isfinite),
    "LogicalNot": _logical_not,
}

# One-tensor ops of the shape family, tabled as the unary ones.
_LIKE: list[tuple[str, str, Reference | None]] = [
    ("identity", "Identity", _any_ref(lambda x: x)),
    ("zeros_like", "ZerosLike", _any_ref(np.zeros_like)),
    ("ones_like", "OnesLike", _any_ref(np.ones_like)),
]


def _from_entry(entry: KernelEntry) -> Reference | None:
    """The reference an entry's ``numpy`` formula gives, applied as the ops hand the kernel its input."""
    formula = entry.numpy
    if formula is None:
        return None
    dtypes = entry.inputs[0].dtypes
    if dtypes == FLOAT_DTYPES:
        return _float_ref(formula, in_float64=True)
    if dtypes == NUMERIC_DTYPES:
        return _numeric_ref(formula)
    return _any_ref(formula)


def _unary_rows() -> list[tuple[str, str, Reference | None]]:
    """(op, kernel, NumPy reference) for every attr-less unary kernel of the kernel reference (its first op), then
    the one-tensor shape ops: a kernel that joins the catalogue is tabled from its reference entry."""
    rows: list[tuple[str, str, Reference | None]] = []
    for entry in REFERENCE.values():
        if entry.family == "unary" and not entry.attrs:
            op = entry.op_name  # "tp.neg (and -x)" is tp.neg
            rows.append((op, entry.name, _UNARY_REFS.get(entry.name) or _from_entry(entry)))
    return rows + _LIKE


def _real(value: Any) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.integer | np.floating):
        raise Refused(f"{value!r} is not a real number")
    return float(value)


def _leaky_relu_ref(x: np.ndarray, alpha: Any = 0.2) -> np.ndarray:
    a = _real(alpha)
    x = as_float(x)
    with np.errstate(all="ignore"):
        return np.where(x < 0, x * np.asarray(a).astype(x.dtype), x).astype(x.dtype)


def _step_ref(x: np.ndarray, alpha: Any = 0.0) -> np.ndarray | None:
    refuse_bool(x)
    a = _real(alpha)
    if not is_float(x):
        if not (a.is_integer() or math.isinf(a)):
            raise Refused("a fractional alpha for an integer tensor")
        return None  # infinities clamp to the dtype's range: not checked here
    with np.errstate(all="ignore"):
        return np.where(x > 0, 1, np.where(x <= 0, np.asarray(a).astype(x.dtype), x)).astype(x.dtype)


def _clip_ref(x: np.ndarray, lo: Any, hi: Any) -> np.ndarray | None:
    refuse_bool(x)
    low, high = _real(lo), _real(hi)
    if not low <= high:
        raise Refused("clip_value_min > clip_value_max")
    if not is_float(x):
        for v in (low, high):
            if not (v.is_integer() or math.isinf(v)):
                raise Refused("a fractional bound for an integer tensor")
        return None
    with np.errstate(all="ignore"):
        return np.clip(x, np.asarray(low).astype(x.dtype), np.asarray(high).astype(x.dtype))


def _attr_scalars() -> st.SearchStrategy[Any]:
    return st.one_of(scalars(), bad_values())


# -- elementwise binary ------------------------------------------------------------------------------


@st.composite
def binary_calls(draw: Any, dtypes: Sequence[str] = DTYPES) -> Call:
    a = draw(arrays(dtypes, max_rank=5))
    b = draw(arrays(dtypes, shape=draw(broadcast_partner(a.shape))))
    kind = draw(st.integers(0, 7))
    if kind == 0:
        return Call((a, draw(scalars())))
    if kind == 1:
        return Call((draw(scalars()), b))
    return Call((a, b))


def _binary_ref(f: Callable[[np.ndarray, np.ndarray], np.ndarray], kind: str) -> Reference:
    def ref(a: Any, b: Any) -> np.ndarray:
        x, y = operands(a, b)
        numpy_or_refuse(np.broadcast_shapes, x.shape, y.shape)
        if kind == "numeric":
            refuse_bool(x)
        if kind == "logical" and (x.dtype != bool or y.dtype != bool):
            raise Refused("logical op on non-bool operands")
        if kind == "float" and not is_float(x):
            x, y = x.astype(np.float32), y.astype(np.float32)
        result = numpy_or_refuse(f, x, y)
        if kind in ("numeric", "any", "float"):
            return np.asarray(result).astype(x.dtype)
        return np.asarray(result)

    return ref


def _floor_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor(a / b) if is_float(a) else np.floor_divide(a, b)


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if not is_float(a) and np.any(np.broadcast_to(b, np.broadcast_shapes(a.shape, b.shape)) < 0):
        raise Refused("integers to negative integer powers")
    out = np.power(a, b)
    if is_float(a):  # C99's pow (torch, TensorFlow.js), where NumPy's 0.5 shortcut is a square root: a base of -inf
        # or -0 with a positive exponent that is not an odd integer gives +inf or +0
        odd = (np.floor(b) == b) & (np.mod(b, 2) == 1)
        not_odd_positive = (b > 0) & ~odd
        out = np.where((a == -np.inf) & not_odd_positive, np.inf, np.where((a == 0) & not_odd_positive, 0.0, out))
        out = out.astype(a.dtype)
    return out


_BINARY: list[tuple[str, str, Callable[..., Any], str]] = [
    ("add", "Add", np.add, "any"),
    ("sub", "Sub", np.subtract, "numeric"),
    ("mul", "Multiply", np.multiply, "any"),
    ("div", "RealDiv", np.true_divide, "float"),
    ("pow", "Pow", _pow, "numeric"),
    ("maximum", "Maximum", np.maximum, "any"),
    ("minimum", "Minimum", np.minimum, "any"),
    ("squared_difference", "SquaredDifference", lambda a, b: np.square(a - b), "numeric"),
    ("atan2", "Atan2", np.arctan2, "float"),
    ("prelu", "Prelu", lambda x, alpha: np.where(x < 0, x * alpha, x), "numeric"),
    ("floor_div", "FloorDiv", _floor_div, "numeric"),
    ("mod", "Mod", np.mod, "numeric"),
    ("equal", "Equal", np.equal, "cmp"),
    ("not_equal", "NotEqual", np.not_equal, "cmp"),
    ("less", "Less", np.less, "cmp"),
    ("less_equal", "LessEqual", np.less_equal, "cmp"),
    ("greater", "Greater", np.greater, "cmp"),
    ("greater_equal", "GreaterEqual", np.greater_equal, "cmp"),
    ("logical_and", "LogicalAnd", np.logical_and, "logical"),
    ("logical_or", "LogicalOr", np.logical_or, "logical"),
    ("logical_xor", "LogicalXor", np.logical_xor, "logical"),
]


@st.composite
def add_n_calls(draw: Any) -> Call:
    shape = draw(shapes(0, 4))
    n = draw(st.integers(0, 4))
    items: list[Any] = []
    for _ in range(n):
        s = shape if draw(st.integers(0, 4)) else draw(shapes(0, 4))
        items.append(draw(arrays(shape=s)))
    if draw(st.integers(0, 9)) == 0:
        return Call((draw(st.sampled_from([items[0] if items else 3, "ab", None, 3])),))
    return Call((items,))


def _add_n_ref(tensors: Any) -> np.ndarray:
    if not isinstance(tensors, list) or not tensors:
        raise Refused("not a non-empty list")
    if any(t.shape != tensors[0].shape or t.dtype != tensors[0].dtype for t in tensors):
        raise Refused("shapes or dtypes differ")
    total = tensors[0].copy()
    with np.errstate(all="ignore"):
        for t in tensors[1:]:
            total = (total + t).astype(total.dtype)
    return total


@st.composite
def where_calls(draw: Any) -> Call:
    shape = draw(shapes(0, 4))
    cond = draw(arrays(("bool", "bool", "bool", "int32"), shape=draw(broadcast_partner(shape))))
    x = draw(arrays(shape=shape))
    y = draw(arrays(shape=draw(broadcast_partner(shape)))) if draw(st.integers(0, 3)) else draw(scalars())
    return Call((cond, x, y))


def _where_ref(cond: np.ndarray, x: Any, y: Any) -> np.ndarray:
    if cond.dtype != bool:
        raise Refused("non-bool condition")
    t, e = operands(x, y)
    numpy_or_refuse(np.broadcast_shapes, cond.shape, t.shape, e.shape)
    return np.where(cond, t, e)


# -- reductions ---------------------------------------------------------------------------------------


@st.composite
def reduce_calls(draw: Any, dtypes: Sequence[str] = DTYPES) -> Call:
    x = draw(arrays(dtypes))
    kwargs: dict[str, Any] = {"axis": draw(axes_for(x.ndim))}
    if draw(st.booleans()):
        kwargs["keepdims"] = draw(st.booleans())
    return Call((x,), kwargs)


def _reduce_ref(f: Callable[..., Any], kind: str) -> Reference:
    def ref(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
        axis = plain_axes(axis)
        if kind == "count":
            x = x.astype(np.int32) if x.dtype == bool else x
            return numpy_or_refuse(f, x, axis=axis, keepdims=keepdims, dtype=x.dtype)
        if kind == "mean":
            x = as_float(x)
            total = numpy_or_refuse(np.sum, x, axis=axis, keepdims=keepdims, dtype=np.float64)
            count = x.size // max(np.asarray(total).size, 1) if x.size else 0
            with np.errstate(all="ignore"):
                return (np.asarray(total) / count).astype(x.dtype)
        if kind == "numeric":
            refuse_bool(x)
        if kind == "bool" and x.dtype != bool:
            raise Refused("a non-bool tensor")
        return np.asarray(numpy_or_refuse(f, x, axis=axis, keepdims=keepdims))

    return ref


@st.composite
def arg_calls(draw: Any) -> Call:
    x = draw(arrays())
    return Call((x,), {"axis": draw(axis_for(x.ndim))} if draw(st.integers(0, 5)) else {})


def _arg_ref(f: Callable[..., Any]) -> Reference:
    def ref(x: np.ndarray, axis: Any = 0) -> np.ndarray:
        refuse_bool(x)
        if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer):
            raise Refused("a non-int axis")
        if x.ndim == 0:
            raise Refused("a 0-d tensor")
        return numpy_or_refuse(f, x, axis=int(axis)).astype(np.int32)

    return ref


@st.composite
def scan_calls(draw: Any) -> Call:
    x = draw(arrays())
    kwargs: dict[str, Any] = {}
    if draw(st.integers(0, 4)):
        kwargs["axis"] = draw(axis_for(x.ndim))
    kwargs["exclusive"] = draw(st.booleans())
    kwargs["reverse"] = draw(st.booleans())
    return Call((x,), kwargs)


def _scan_ref(f: Callable[..., Any], identity: int) -> Reference:
    def ref(x: np.ndarray, axis: Any = 0, exclusive: bool = False, reverse: bool = False) -> np.ndarray:
        if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer):
            raise Refused("a non-int axis")
        if x.ndim == 0:
            raise Refused("a 0-d tensor")
        x = x.astype(np.int32) if x.dtype == bool else x
        axis = int(axis)
        numpy_or_refuse(np.moveaxis, x, axis, 0)
        y = np.moveaxis(x, axis, 0)
        if reverse:
            y = y[::-1]
        with np.errstate(all="ignore"):
            out = f(y, axis=0, dtype=y.dtype)
            if exclusive and len(out):
                out = np.concatenate([np.full_like(out[:1], identity), out[:-1]])
        if reverse:
            out = out[::-1]
        return np.moveaxis(out, 0, axis)

    return ref


# -- linear algebra ------------------------------------------------------------------------------------


@st.composite
def matmul_calls(draw: Any) -> Call:
    a = draw(arrays(max_rank=4))
    shape_b = list(draw(shapes(0, 4)))
    if a.ndim and len(shape_b) >= 1 and draw(st.integers(0, 3)):  # mostly agreeing inner dimensions
        shape_b[-2 if len(shape_b) >= 2 else 0] = a.shape[-1]
    b = draw(arrays(shape=tuple(shape_b)))
    kwargs = {}
    if draw(st.integers(0, 3)) == 0:
        kwargs = {"transpose_a": draw(st.booleans()), "transpose_b": draw(st.booleans())}
    return Call((a, b), kwargs)


def _matmul_ref(a: np.ndarray, b: np.ndarray, transpose_a: bool = False, transpose_b: bool = False) -> np.ndarray:
    x, y = operands(a, b)
    refuse_bool(x)
    if transpose_a and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if transpose_b and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return numpy_or_refuse(np.matmul, x, y)


_EQUATIONS = [
    "ij,jk->ik", "ij,jk", "ii->i", "ii", "ij->ji", "...ij,...jk->...ik", "i,i->", "i,j->ij", "bij,bjk->bik",
    "ij", "i", "ij,j", "...i->...", "a...,a...->...",
    "ij,jk->il", "ij->ii", "ij,,k", "->", "ij->", "1j", "i...j...", ",", "i->j", "ij->i->j", "", "i j -> j",
]  # fmt: skip


@st.composite
def einsum_calls(draw: Any) -> Call:
    equation = draw(st.sampled_from(_EQUATIONS))
    terms = equation.split("->")[0].split(",")
    sizes = {c: draw(st.sampled_from((0, 1, 2, 3))) for c in "abcdefghijklmnopqrstuvwxyz"}
    dtype = draw(st.sampled_from(DTYPES))
    operands_: list[Any] = []
    for term in terms:
        if draw(st.integers(0, 6)) == 0:
            shape = draw(shapes(0, 4))
        else:
            lead = draw(shapes(0, 2)) if "..." in term else ()
            shape = (*lead, *(sizes[c] for c in term.replace("...", "") if c in sizes))
        operands_.append(fill_array(shape, draw(st.sampled_from((dtype, dtype, *DTYPES))), draw(st.integers(0, 99))))
    if draw(st.integers(0, 8)) == 0:
        operands_ = operands_[:-1] if operands_ else [draw(arrays())]
    if draw(st.integers(0, 12)) == 0:
        return Call((draw(st.sampled_from([3, None, b"ij"])), *operands_))
    return Call((equation, *operands_))


def _einsum_ref(equation: Any, *ops: np.ndarray) -> np.ndarray | None:
    if not isinstance(equation, str) or not ops:
        raise Refused("no equation or no operands")
    dtype = result_type(*ops)
    if dtype.kind == "b":
        raise Refused("bool operands")
    compact = equation.replace(" ", "")
    return numpy_or_refuse(np.einsum, compact, *(o.astype(dtype) for o in ops))


# -- shape ops ------------------------------------------------------------------------------------------


@st.composite
def x_and(draw: Any, attr: Callable[[np.ndarray], st.SearchStrategy[Any]], **kw: Any) -> Call:
    x = draw(arrays(**kw))
    return Call((x, draw(attr(x))))


def _reshape_targets(x: np.ndarray) -> st.SearchStrategy[Any]:
    size = x.size
    return st.one_of(
        shape_args(x.shape),
        st.sampled_from([(size,), (-1,), (size, -1), (-1, 1), (1, -1, 1), (size + 1,), size, [size], (-1, -1)]),
    )


def _reshape_ref(x: np.ndarray, shape: Any) -> np.ndarray:
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)  # np.reshape takes a NumPy integer as a 1-d shape too
    if not isinstance(shape, tuple | list) or any(
        isinstance(d, bool) or not isinstance(d, int | np.integer) for d in shape
    ):
        raise Refused("not a shape")
    if -1 in shape and 0 in shape:
        raise Refused("-1 beside a zero dimension is ambiguous")
    return numpy_or_refuse(np.reshape, x, tuple(shape))


def _flatten_ref(x: np.ndarray, start_axis: Any = 1) -> np.ndarray:
    if isinstance(start_axis, bool | np.bool_) or not isinstance(start_axis, int | np.integer):
        raise Refused("a non-int axis")
    rank = max(x.ndim, 1)
    if not -rank <= start_axis < rank:
        raise Refused("the axis is out of range")
    start = int(start_axis) % rank
    return x.reshape((*x.shape[:start], int(np.prod(x.shape[start:], dtype=np.int64))))


def _perms(x: np.ndarray) -> st.SearchStrategy[Any]:
    n = x.ndim
    return st.one_of(
        st.none(),
        st.permutations(list(range(n))),
        st.permutations(list(range(-n, 0))),
        st.lists(st.integers(-n - 1, n), max_size=n + 1),
        st.sampled_from(["ab", 1.5, (0.5,), 3]),
    )


def _transpose_ref(x: np.ndarray, perm: Any = None) -> np.ndarray:
    if perm is not None and (
        not isinstance(perm, list | tuple) or any(isinstance(p, bool) or not isinstance(p, int) for p in perm)
    ):
        raise Refused("not a permutation")
    return numpy_or_refuse(np.transpose, x, perm)


def _broadcast_targets(x: np.ndarray) -> st.SearchStrategy[Any]:
    return st.one_of(shape_args(x.shape), st.just((2, *x.shape)), broadcast_partner(x.shape))


def _broadcast_to_ref(x: np.ndarray, shape: Any) -> np.ndarray:
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (int(shape),)
    if not isinstance(shape, tuple | list) or any(
        isinstance(d, bool) or not isinstance(d, int | np.integer) for d in shape
    ):
        raise Refused("not a shape")
    return numpy_or_refuse(np.broadcast_to, x, tuple(shape)).copy()


def _squeeze_ref(x: np.ndarray, axis: Any = None) -> np.ndarray:
    return numpy_or_refuse(np.squeeze, x, plain_axes(axis))


def _expand_dims_ref(x: np.ndarray, axis: Any = 0) -> np.ndarray:
    if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer):
        raise Refused("a non-int axis")
    return numpy_or_refuse(np.expand_dims, x, int(axis))


@st.composite
def fill_calls(draw: Any) -> Call:
    args: tuple[Any, ...] = (draw(shape_args()), draw(st.one_of(scalars(), bad_values())))
    if draw(st.booleans()):
        args += (draw(dtype_names()),)
    return Call(args)


_DTYPE_OF = {bool: "bool", float: "float32", int: "int32"}


def _dtype_arg(dtype: Any) -> str:
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    if dtype in _DTYPE_OF:
        return _DTYPE_OF[dtype]
    if dtype is np.float64:
        return "float64"
    raise Refused(f"dtype {dtype!r}")


def _shape_arg(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, tuple | list) or any(
        isinstance(d, bool) or not isinstance(d, int | np.integer) or d < 0 for d in shape
    ):
        raise Refused(f"shape {shape!r}")
    if math.prod(int(d) for d in shape) > 10**8:
        raise Refused("too large to allocate")
    return tuple(int(d) for d in shape)


def _fits(value: Any, dtype: str) -> Any:
    """``value`` as a scalar of ``dtype``, or Refused where it cannot hold it exactly (a fractional int, say)."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, bool | int | float):
        raise Refused(f"{value!r} is not a number")
    if dtype in INT_DTYPES:
        if isinstance(value, float) and not value.is_integer():
            raise Refused(f"{value!r} is not an integer")
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise Refused(f"{value!r} is out of range for {dtype}")
    return value


def _fill_ref(shape: Any, value: Any, dtype: Any = None) -> np.ndarray:
    dims = _shape_arg(shape)
    if isinstance(value, np.generic):
        value = value.item()
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32"
        elif isinstance(value, float):
            dtype = "float32"
        else:
            raise Refused(f"{value!r} is not a number")
    target = _dtype_arg(dtype)
    with np.errstate(all="ignore"):
        return np.full(dims, _fits(value, target)).astype(target)


@st.composite
def zeros_calls(draw: Any) -> Call:
    return Call((draw(shape_args()),) + ((draw(dtype_names()),) if draw(st.booleans()) else ()))


def _zeros_ref(value: int) -> Reference:
    def ref(shape: Any, dtype: Any = "float32") -> np.ndarray:
        return np.full(_shape_arg(shape), value, dtype=_dtype_arg("float32" if dtype is None else dtype))

    return ref


@st.composite
def one_hot_calls(draw: Any) -> Call:
    depth = draw(st.one_of(st.integers(-1, 5), bad_values()))
    indices = draw(index_arrays(draw(shapes(0, 4)), depth if isinstance(depth, int) else 3))
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["on_value"] = draw(_attr_scalars())
        kwargs["off_value"] = draw(_attr_scalars())
    if draw(st.booleans()):
        kwargs["dtype"] = draw(dtype_names())
    return Call((indices, depth), kwargs)


def _one_hot_ref(indices: np.ndarray, depth: Any, on_value: Any = 1, off_value: Any = 0, dtype: Any = "int32") -> Any:
    if indices.dtype.name not in INT_DTYPES:
        raise Refused("non-int indices")
    if isinstance(depth, bool) or not isinstance(depth, int | np.integer) or not 0 <= depth < 2**31:
        raise Refused(f"depth {depth!r}")
    target = _dtype_arg(dtype)
    on, off = _fits(on_value, target), _fits(off_value, target)
    hot = indices[..., None] == np.arange(depth)
    with np.errstate(all="ignore"):
        return np.where(hot, on, off).astype(target)


@st.composite
def range_calls(draw: Any) -> Call:
    value = st.one_of(st.integers(-6, 6), st.sampled_from([0.5, -2.5, 1e5, math.nan, math.inf, "a", None, True]))
    args = tuple(draw(value) for _ in range(draw(st.integers(1, 3))))
    if args and args[0] is None:
        args = (3, *args[1:])
    return Call(args, {"dtype": draw(dtype_names())} if draw(st.booleans()) else {})


def _range_ref(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> np.ndarray:
    if stop is None:
        start, stop = 0, start
    target = "float32" if dtype is None else _dtype_arg(dtype)
    if target == "bool":
        raise Refused("a bool range")
    values = [_fits(v, target) for v in (start, stop, step)]
    if not all(math.isfinite(v) for v in values) or values[2] == 0:
        raise Refused("non-finite or zero step")
    count = max(math.ceil((values[1] - values[0]) / values[2]), 0)
    if count > 10**7:
        raise Refused("too long")
    return (values[0] + values[2] * np.arange(count, dtype=np.float64)).astype(target)


@st.composite
def linspace_calls(draw: Any) -> Call:
    value = st.sampled_from([0.0, 1.0, -3.5, 2, math.nan, math.inf, "a", None])
    return Call((draw(value), draw(value), draw(st.one_of(st.integers(-1, 6), bad_values()))))


def _linspace_ref(start: Any, stop: Any, num: Any) -> np.ndarray:
    if isinstance(num, bool) or not isinstance(num, int | np.integer) or num < 1:
        raise Refused(f"num {num!r}")
    first, _last = _fits(start, "float64"), _fits(stop, "float64")
    if num == 1:
        return np.array([first], dtype=np.float32)
    return None  # type: ignore[return-value]  # the float64 rounding of the middle values is the op's own


@st.composite
def top_k_calls(draw: Any) -> Call:
    x = draw(arrays())
    kwargs: dict[str, Any] = {}
    if draw(st.integers(0, 5)):
        last = x.shape[-1] if x.ndim else 1
        kwargs["k"] = draw(st.one_of(st.integers(-1, last + 1), bad_values()))
    return Call((x,), kwargs)


def _top_k_ref(x: np.ndarray, k: Any = 1, sorted: bool = True) -> Any:
    refuse_bool(x)
    if x.ndim == 0 or isinstance(k, bool) or not isinstance(k, int | np.integer) or not 0 <= k <= x.shape[-1]:
        raise Refused("bad k or 0-d x")
    rows = x.reshape(math.prod(x.shape[:-1]), x.shape[-1])
    order = np.zeros((len(rows), int(k)), dtype=np.int32)
    for r, row in enumerate(rows):  # NaN above every number, then largest first, ties by lower index
        ranked = builtins.sorted(
            range(len(row)), key=lambda i: (1, -float(row[i]), i) if row[i] == row[i] else (0, 0.0, i)
        )
        order[r] = ranked[: int(k)]
    indices = order.reshape((*x.shape[:-1], int(k)))
    return [np.take_along_axis(x, indices.astype(np.int64), -1), indices]


@st.composite
def cast_calls(draw: Any) -> Call:
    return Call((draw(arrays()), draw(dtype_names())))


def _cast_ref(x: np.ndarray, dtype: Any) -> np.ndarray | None:
    target = _dtype_arg(dtype)
    if is_float(x) and target in INT_DTYPES and not np.all(np.isfinite(x) & (np.abs(x) < 2**31)):
        return None  # NaN, inf or out-of-range floats to ints: undefined
    with np.errstate(all="ignore"):
        return x.astype(target)


@st.composite
def tensor_calls(draw: Any) -> Call:
    data = draw(
        st.one_of(
            arrays().map(Raw),
            arrays().map(lambda a: Raw(a.tolist())),
            st.sampled_from(
                [
                    [[1, 2], [3]],
                    "abc",
                    None,
                    1 + 2j,
                    [1, "a"],
                    2**70,
                    [2**40, 1],
                    object(),
                    np.array(["a"]),
                    np.zeros(2, np.complex64),
                    np.zeros(2, np.uint8),
                    np.float16(1.5),
                    [],
                    [[]],
                    {1, 2},
                ]
            ).map(Raw),
        )
    )
    return Call((data,), {"dtype": draw(dtype_names())} if draw(st.booleans()) else {})


# -- joining, splitting, slicing, padding ---------------------------------------------------------------


@st.composite
def list_calls(draw: Any, new_axis: bool) -> Call:
    shape = draw(shapes(0, 4))
    items = []
    for _ in range(draw(st.integers(0, 4))):
        s = list(shape)
        if s and draw(st.integers(0, 3)) == 0:
            s[draw(st.integers(0, len(s) - 1))] = draw(_DIM)
        if draw(st.integers(0, 9)) == 0:
            s = list(draw(shapes(0, 4)))
        items.append(draw(arrays(shape=tuple(s))))
    tensors: Any = items
    if draw(st.integers(0, 9)) == 0:
        tensors = draw(st.sampled_from([items[0] if items else 1, "ab", 3, None]))
    kwargs = {"axis": draw(axis_for(len(shape) + (1 if new_axis else 0)))} if draw(st.integers(0, 4)) else {}
    return Call((tensors,), kwargs)


def _join_ref(f: Callable[..., Any]) -> Reference:
    def ref(tensors: Any, axis: Any = 0) -> np.ndarray:
        if not isinstance(tensors, list) or not tensors:
            raise Refused("not a non-empty list")
        if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer):
            raise Refused("a non-int axis")
        dtype = result_type(*tensors)
        return numpy_or_refuse(f, [t.astype(dtype) for t in tensors], axis=int(axis))

    return ref


def _concat_ref(tensors: Any, axis: Any = 0) -> np.ndarray:
    if isinstance(tensors, list) and tensors and tensors[0].ndim == 0:
        raise Refused("0-d tensors")
    return _join_ref(np.concatenate)(tensors, axis)


def _unstack_ref(x: np.ndarray, axis: Any = 0) -> list[np.ndarray]:
    if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer) or x.ndim == 0:
        raise Refused("a non-int axis or a 0-d x")
    moved = numpy_or_refuse(np.moveaxis, x, int(axis), 0)
    return list(moved)


@st.composite
def split_calls(draw: Any) -> Call:
    x = draw(arrays())
    size = x.shape[0] if x.ndim else 2
    sizes = st.one_of(
        st.integers(-1, 4),
        st.lists(st.integers(-2, size + 1), max_size=4),
        st.just([size - 1, -1] if size else [0, -1]),
        bad_values(),
    )
    return Call((x, draw(sizes)), {"axis": draw(axis_for(x.ndim))} if draw(st.integers(0, 3)) == 0 else {})


def _split_ref(x: np.ndarray, num_or_size_splits: Any, axis: Any = 0) -> list[np.ndarray]:
    if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer) or x.ndim == 0:
        raise Refused("a non-int axis or a 0-d x")
    moved = numpy_or_refuse(np.moveaxis, x, int(axis), 0)
    n = moved.shape[0]
    spec = num_or_size_splits
    if isinstance(spec, bool):
        raise Refused("a bool")
    if isinstance(spec, int | np.integer):
        if spec < 1 or n % spec:
            raise Refused("unequal parts")
        if n == 0 and spec > 1 << 16:
            raise Refused("more than 65536 parts of an empty axis (tensorplug's limit; numpy would build them all)")
        sizes = [n // spec] * int(spec)
    else:
        if not isinstance(spec, list) or not spec or any(isinstance(s, bool) or not isinstance(s, int) for s in spec):
            raise Refused("not sizes")
        if spec.count(-1) > 1 or any(s < -1 for s in spec):
            raise Refused("bad sizes")
        known = sum(s for s in spec if s != -1)
        sizes = [n - known if s == -1 else s for s in spec]
        if any(s < 0 for s in sizes) or sum(sizes) != n:
            raise Refused("sizes do not add up")
    bounds = np.cumsum(sizes)[:-1]
    return [np.moveaxis(part, 0, int(axis)) for part in np.split(moved, bounds)]


@st.composite
def slice_calls(draw: Any) -> Call:
    x = draw(arrays())
    n = x.ndim
    begin = draw(st.one_of(st.lists(st.integers(-1, 4), max_size=n + 1), st.integers(-1, 3), bad_values()))
    if draw(st.integers(0, 4)) == 0:
        return Call((x, begin))
    size = draw(st.one_of(st.lists(st.integers(-2, 4), max_size=n + 1), st.integers(-1, 3), bad_values()))
    return Call((x, begin, size))


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        raise Refused("a bool")
    if isinstance(value, int | np.integer):
        return [int(value)]
    if not isinstance(value, list | tuple) or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise Refused(f"not ints: {value!r}")
    return list(value)


def _slice_ref(x: np.ndarray, begin: Any, size: Any = None) -> np.ndarray:
    starts, sizes = _ints(begin), [] if size is None else _ints(size)
    if len(starts) > x.ndim or len(sizes) > x.ndim:
        raise Refused("too many entries")
    starts += [0] * (x.ndim - len(starts))
    sizes += [-1] * (x.ndim - len(sizes))
    index = []
    for b, s, d in zip(starts, sizes, x.shape, strict=True):
        s = d - b if s == -1 else s
        if not 0 <= b <= d or not 0 <= s <= d - b:
            raise Refused("out of range")
        index.append(slice(b, b + s))
    return x[tuple(index)]


@st.composite
def strided_slice_calls(draw: Any) -> Call:
    x = draw(arrays(max_rank=4))
    n = draw(st.integers(0, x.ndim + 1))
    entries = st.lists(st.integers(-5, 5), min_size=n, max_size=n)
    kwargs: dict[str, Any] = {}
    strides = draw(st.lists(st.sampled_from((1, 1, 2, -1, -2, 3, 0)), min_size=n, max_size=n))
    if draw(st.integers(0, 9)) == 0:
        strides = draw(st.lists(st.integers(-2, 2), max_size=n + 1))
    for mask in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"):
        if draw(st.integers(0, 3)) == 0:
            kwargs[mask] = draw(st.integers(-1, 2**n))
    return Call((x, draw(entries), draw(entries), strides), kwargs)


@st.composite
def pad_calls(draw: Any, mirror: bool) -> Call:
    x = draw(arrays(max_rank=4))
    pairs = st.lists(st.tuples(st.integers(-1, 3), st.integers(0, 3)), min_size=x.ndim, max_size=x.ndim)
    paddings = draw(st.one_of(pairs, pairs, pairs, st.lists(st.tuples(st.integers(0, 2)), max_size=3), bad_values()))
    if mirror:
        mode = draw(st.sampled_from(["reflect", "symmetric", "REFLECT", "edge", 3]))
        return Call((x, paddings, mode))
    if draw(st.booleans()):
        return Call((x, paddings, draw(_attr_scalars())))
    return Call((x, paddings))


def _pairs(x: np.ndarray, paddings: Any) -> list[tuple[int, int]]:
    if not isinstance(paddings, list | tuple) or len(paddings) != x.ndim:
        raise Refused("not one pair per axis")
    if any(len(p) != 2 or min(p) < 0 for p in paddings):
        raise Refused("bad pair")
    return [(int(p[0]), int(p[1])) for p in paddings]


def _pad_ref(x: np.ndarray, paddings: Any, constant_value: Any = 0) -> np.ndarray:
    pairs = _pairs(x, paddings)
    value = _fits(constant_value, x.dtype.name) if x.dtype != bool else bool(_fits(constant_value, "bool"))
    with np.errstate(all="ignore"):
        fill = np.array(value).astype(x.dtype)
    return np.pad(x, pairs or 0, constant_values=fill) if pairs else x.copy()


def _mirror_pad_ref(x: np.ndarray, paddings: Any, mode: Any) -> np.ndarray:
    pairs = _pairs(x, paddings)
    if not isinstance(mode, str) or mode.lower() not in ("reflect", "symmetric"):
        raise Refused("mode")
    offset = 1 if mode.lower() == "reflect" else 0
    if any(max(p) > d - offset for p, d in zip(pairs, x.shape, strict=True)):
        raise Refused("mirror wider than the axis")
    return np.pad(x, pairs, mode=mode.lower()) if pairs else x.copy()


def _tile_reps(x: np.ndarray) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(st.integers(-1, 3), min_size=x.ndim, max_size=x.ndim), shape_args(), bad_values())


def _tile_ref(x: np.ndarray, reps: Any) -> np.ndarray:
    counts = _ints(reps)
    if len(counts) != x.ndim or any(r < 0 for r in counts):
        raise Refused("reps")
    return numpy_or_refuse(np.tile, x, counts) if counts else x.copy()


def _reverse_ref(x: np.ndarray, axis: Any = None) -> np.ndarray:
    axis = plain_axes(axis)
    return numpy_or_refuse(np.flip, x, axis).copy()


# -- gathering, scattering ---------------------------------------------------------------------------------


@st.composite
def gather_calls(draw: Any) -> Call:
    x = draw(arrays(max_rank=4))
    axis = draw(axis_for(x.ndim)) if draw(st.integers(0, 2)) == 0 else draw(st.integers(0, max(x.ndim - 1, 0)))
    high = x.shape[axis] if isinstance(axis, int) and 0 <= axis < x.ndim else 2
    kwargs: dict[str, Any] = {"axis": axis}
    shape = draw(shapes(0, 3))
    if draw(st.integers(0, 3)) == 0:
        b = draw(st.integers(-1, 2))
        kwargs["batch_dims"] = b
        if b > 0:
            shape = x.shape[: min(b, x.ndim)] + shape
    return Call((x, draw(index_arrays(shape, high))), kwargs)


def _gather_ref(x: np.ndarray, indices: np.ndarray, axis: Any = 0, batch_dims: int = 0) -> np.ndarray | None:
    if indices.dtype.name not in INT_DTYPES or x.ndim == 0:
        raise Refused("non-int indices or 0-d x")
    if isinstance(axis, bool | np.bool_) or not isinstance(axis, int | np.integer):
        raise Refused("a non-int axis")
    if not -x.ndim <= axis < x.ndim:
        raise Refused("axis out of range")
    if batch_dims:
        return None  # batched gathers: the differential test compares them
    if indices.size and (indices.min() < 0 or indices.max() >= x.shape[axis]):
        raise Refused("index out of range")
    return np.take(x, indices, axis=int(axis))


@st.composite
def gather_nd_calls(draw: Any) -> Call:
    params = draw(arrays(max_rank=4))
    depth = draw(st.integers(0, params.ndim + 1))
    high = min(params.shape[:depth] or (2,))
    return Call((params, draw(index_arrays((*draw(shapes(0, 2)), depth), high))))


def _nd_positions(indices: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if indices.dtype.name not in INT_DTYPES or indices.ndim == 0 or indices.shape[-1] > len(shape):
        raise Refused("bad indices")
    depth = indices.shape[-1]
    tuples = indices.reshape(math.prod(indices.shape[:-1]), depth)
    if tuples.size and (np.any(tuples < 0) or np.any(tuples >= np.array(shape[:depth]))):
        raise Refused("index out of range")
    return tuples


def _gather_nd_ref(params: np.ndarray, indices: np.ndarray) -> np.ndarray:
    tuples = _nd_positions(indices, params.shape)
    depth = indices.shape[-1]
    rows = [params[tuple(t)] for t in tuples]
    rest = params.shape[depth:]
    out = np.array(rows, dtype=params.dtype).reshape(len(rows), *rest) if rows else np.zeros((0, *rest), params.dtype)
    return out.reshape(indices.shape[:-1] + rest)


@st.composite
def scatter_nd_calls(draw: Any) -> Call:
    shape = draw(shapes(0, 3))
    depth = draw(st.integers(0, len(shape) + 1))
    lead = draw(shapes(0, 2))
    indices = draw(index_arrays((*lead, depth), min(shape[:depth] or (2,))))
    updates_shape = (*lead, *shape[depth:]) if draw(st.integers(0, 4)) else draw(shapes(0, 3))
    updates = draw(arrays(shape=updates_shape))
    return Call((indices, updates, draw(st.one_of(st.just(shape), shape_args(shape)))))


def _scatter_nd_ref(indices: np.ndarray, updates: np.ndarray, shape: Any) -> np.ndarray:
    refuse_bool(updates)
    dims = _shape_arg(shape)
    tuples = _nd_positions(indices, dims)
    depth = indices.shape[-1]
    if updates.shape != indices.shape[:-1] + dims[depth:]:
        raise Refused("updates shape")
    out = np.zeros(dims, dtype=updates.dtype)
    flat = updates.reshape(len(tuples), *dims[depth:])
    with np.errstate(all="ignore"):
        for t, u in zip(tuples, flat, strict=True):
            out[tuple(t)] += u
    return out


@st.composite
def segment_calls(draw: Any) -> Call:
    x = draw(arrays(max_rank=4))
    k = draw(st.integers(0, x.ndim))
    n = draw(st.one_of(st.integers(-1, 4), bad_values()))
    shape = x.shape[:k] if draw(st.integers(0, 4)) else draw(shapes(0, 3))
    return Call((x, draw(index_arrays(shape, n if isinstance(n, int) else 3)), n))


def _segment_ref(x: np.ndarray, segment_ids: np.ndarray, num_segments: Any) -> np.ndarray:
    refuse_bool(x)
    if segment_ids.dtype.name not in INT_DTYPES:
        raise Refused("non-int ids")
    n = num_segments
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not 0 <= n < 2**31:
        raise Refused("num_segments")
    if x.shape[: segment_ids.ndim] != segment_ids.shape:
        raise Refused("ids shape")
    rest = x.shape[segment_ids.ndim :]
    out = np.zeros((int(n), *rest), dtype=x.dtype)
    with np.errstate(all="ignore"):
        for i, v in zip(segment_ids.reshape(-1), x.reshape(segment_ids.size, *rest), strict=True):
            if 0 <= i < n:
                out[i] += v
    return out


# -- neural-network ops --------------------------------------------------------------------------------------


def _softmax_ref(x: np.ndarray, axis: Any = -1) -> np.ndarray:
    if not is_float(x) or isinstance(axis, bool) or not isinstance(axis, int | np.integer):
        raise Refused("non-float x or a non-int axis")
    y = x.astype(np.float64)
    numpy_or_refuse(np.moveaxis, y, int(axis), 0)
    with np.errstate(all="ignore"):
        shifted = y - np.max(y, axis=int(axis), keepdims=True) if y.size else y
        e = np.exp(shifted)
        return (e / np.sum(e, axis=int(axis), keepdims=True)).astype(x.dtype)


@st.composite
def nn_axis_calls(draw: Any) -> Call:
    x = draw(arrays(max_rank=4))
    return Call((x,), {"axis": draw(axis_for(x.ndim))} if draw(st.integers(0, 2)) else {})


@st.composite
def conv_calls(draw: Any, transpose: bool = False) -> Call:
    rank = draw(st.sampled_from((4, 4, 4, 3, 2, 5)))
    x_shape = draw(st.lists(st.sampled_from((0, 1, 2, 3, 4, 5)), min_size=rank, max_size=rank).map(tuple))
    channels = x_shape[-1] if x_shape else 1
    f_shape = [draw(st.integers(0, 3)), draw(st.integers(0, 3)), channels, draw(st.integers(0, 3))]
    if transpose:
        f_shape[2], f_shape[3] = f_shape[3], channels
    if draw(st.integers(0, 6)) == 0:
        f_shape = list(draw(shapes(0, 5)))
    dtypes = ("float32", "float32", "float64", "int32")
    x = draw(arrays(dtypes, shape=x_shape))
    f = draw(arrays(dtypes, shape=tuple(f_shape)))
    strides = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 2), st.integers(1, 2)), bad_values()))
    pad = draw(
        st.one_of(
            st.sampled_from(["valid", "same", "VALID", 1, 0, -1, [[1, 0], [0, 1]], [[0, 0], [1, 1], [1, 1], [0, 0]]]),
            bad_values(),
        )
    )
    if transpose:
        out_shape = draw(st.one_of(shapes(3, 4), bad_values()))
        return Call((x, f, out_shape), {"strides": strides, "pad": pad})
    kwargs: dict[str, Any] = {"strides": strides, "pad": pad}
    if draw(st.integers(0, 3)) == 0:
        kwargs["dilations"] = draw(st.one_of(st.integers(1, 2), bad_values()))
    if draw(st.integers(0, 9)) == 0:
        kwargs["data_format"] = "NCHW"
    return Call((x, f), kwargs)


@st.composite
def pool_calls(draw: Any) -> Call:
    rank = draw(st.sampled_from((4, 4, 4, 3, 2)))
    x = draw(arrays(shape=draw(st.lists(st.sampled_from((0, 1, 2, 3, 4, 5)), min_size=rank, max_size=rank))))
    window = draw(st.one_of(st.integers(1, 3), st.tuples(st.integers(1, 3), st.integers(1, 3)), bad_values()))
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["strides"] = draw(st.one_of(st.integers(1, 3), st.none(), bad_values()))
    if draw(st.booleans()):
        kwargs["pad"] = draw(st.sampled_from(["valid", "same", 1, 0, [[1, 0], [0, 1]], "full", -1]))
    return Call((x, window), kwargs)


@st.composite
def backprop_input_calls(draw: Any) -> Call:
    shape = draw(st.lists(st.integers(1, 5), min_size=4, max_size=4).map(tuple))
    f = draw(arrays(FLOAT_DTYPES, shape=(draw(st.integers(1, 3)), draw(st.integers(1, 3)), shape[3], 2)))
    stride = draw(st.integers(1, 2))
    pad = draw(st.sampled_from(["valid", "same", 1]))
    dy_shape = draw(shapes(4, 4))
    if draw(st.integers(0, 2)):
        try:  # the shape a convolution would give, when it fits
            out = tp.conv2d(tp.zeros(shape), tp.zeros(f.shape), strides=stride, pad=pad).shape
            dy_shape = out
        except tp.TensorplugError:
            pass
    dy = draw(arrays((*FLOAT_DTYPES, "int32"), shape=dy_shape))
    return Call((dy, f, draw(st.one_of(st.just(shape), shape_args(shape)))), {"strides": stride, "pad": pad})


@st.composite
def backprop_filter_calls(draw: Any) -> Call:
    shape = draw(st.lists(st.integers(1, 5), min_size=4, max_size=4).map(tuple))
    fshape = (draw(st.integers(1, 3)), draw(st.integers(1, 3)), shape[3], 2)
    x = draw(arrays(FLOAT_DTYPES, shape=shape))
    stride = draw(st.integers(1, 2))
    pad = draw(st.sampled_from(["valid", "same", 1]))
    dy_shape = draw(shapes(4, 4))
    if draw(st.integers(0, 2)):
        with contextlib.suppress(tp.TensorplugError):
            dy_shape = tp.conv2d(tp.zeros(shape), tp.zeros(fshape), strides=stride, pad=pad).shape
    dy = draw(arrays((*FLOAT_DTYPES, "bool"), shape=dy_shape))
    return Call((x, dy, draw(st.one_of(st.just(fshape), shape_args(fshape)))), {"strides": stride, "pad": pad})


@st.composite
def pool_grad_calls(draw: Any, with_output: bool) -> Call:
    shape = draw(st.lists(st.integers(1, 5), min_size=4, max_size=4).map(tuple))
    window = draw(st.integers(1, 3))
    pad = draw(st.sampled_from(["valid", "same"]))
    dtype = draw(st.sampled_from(("float32", "float64", "int32")))
    x = draw(arrays((dtype,), shape=shape))
    pooled = draw(shapes(4, 4))
    if draw(st.integers(0, 2)):
        with contextlib.suppress(tp.TensorplugError):
            pooled = tp.max_pool(tp.zeros(shape), window, pad=pad).shape
    dy = draw(arrays((dtype, dtype, "float64"), shape=pooled))
    args: tuple[Any, ...] = (dy, x)
    if with_output:  # max_pool's own output (the gradient's contract), or one of a wrong shape
        output = draw(arrays((dtype,), shape=draw(shapes(0, 4))))
        if draw(st.integers(0, 4)):
            with contextlib.suppress(tp.TensorplugError):
                output = tp.max_pool(tp.tensor(x), window, pad=pad).numpy()
        args += (output,)
    return Call((*args, draw(st.one_of(st.just(window), bad_values()))), {"pad": pad})


# -- random and composite ----------------------------------------------------------------------------------


@st.composite
def random_calls(draw: Any, normal: bool) -> Call:
    value = st.sampled_from([0.0, 1.0, -1.0, 5, 2.5, math.nan, math.inf, "a", None, True, 10**30])
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["dtype"] = draw(dtype_names())
    if draw(st.booleans()):
        kwargs["seed"] = draw(st.one_of(st.integers(-1, 10**6), st.sampled_from([None, 1.5, "s", True])))
    names = ("mean", "stddev") if normal else ("minval", "maxval")
    for name in names:
        if draw(st.booleans()):
            kwargs[name] = draw(value)
    return Call((draw(shape_args()),), kwargs)


def _random_ref(normal: bool) -> Reference:
    def ref(shape: Any, a: Any = 0.0, b: Any = 1.0, dtype: Any = "float32", seed: Any = None, **kw: Any) -> Any:
        dims = _shape_arg(shape)
        target = _dtype_arg(dtype)
        if target == "bool" or (normal and target in INT_DTYPES):
            raise Refused("dtype")
        return np.zeros(dims, dtype=target)  # shape and dtype only

    return ref


@st.composite
def dropout_calls(draw: Any) -> Call:
    x = draw(arrays(max_rank=4))
    rate = draw(st.sampled_from([0.0, 0.5, 0.25, 1.0, -0.1, math.nan, "a", None]))
    kwargs: dict[str, Any] = {"seed": draw(st.integers(0, 100))}
    if draw(st.integers(0, 3)) == 0:
        kwargs["noise_shape"] = draw(st.one_of(broadcast_partner(x.shape), shape_args(x.shape)))
    return Call((x, rate), kwargs)


@st.composite
def moving_average_calls(draw: Any) -> Call:
    v = draw(arrays(max_rank=3))
    x = draw(arrays(shape=draw(broadcast_partner(v.shape))))
    decay = draw(st.sampled_from([0.5, 0.9, 0, 1, "a", None, math.nan]))
    kwargs: dict[str, Any] = {}
    if draw(st.integers(0, 3)):
        kwargs["step"] = draw(st.sampled_from([1, 2, 0, -1, 2.5, "s"]))
    if draw(st.booleans()):
        kwargs["zero_debias"] = draw(st.booleans())
    return Call((v, x, decay), kwargs)


@st.composite
def norm_calls(draw: Any) -> Call:
    x = draw(arrays(max_rank=4))
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["ord"] = draw(st.sampled_from(["euclidean", "fro", 1, 2, 3, 0.5, math.inf, -math.inf, 0, -1, "x", None]))
    if draw(st.booleans()):
        kwargs["axis"] = draw(axes_for(x.ndim))
    if draw(st.booleans()):
        kwargs["keepdims"] = draw(st.booleans())
    return Call((x,), kwargs)


@st.composite
def sum_to_shape_calls(draw: Any) -> Call:
    dy = draw(arrays(NUMERIC_DTYPES, max_rank=4))
    target = draw(st.one_of(broadcast_partner(dy.shape), st.just(dy.shape[1:])))
    return Call((dy, tuple(target)))


def _sum_to_shape_ref(dy: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if len(shape) > dy.ndim or numpy_or_refuse(np.broadcast_shapes, shape, dy.shape) != dy.shape:
        raise Refused("dy does not broadcast from shape")
    lead = dy.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and dy.shape[lead + i] != 1)
    with np.errstate(all="ignore"):
        return np.sum(dy, axis=axes, dtype=dy.dtype).reshape(shape)


# -- the table --------------------------------------------------------------------------------------------------


def _unary_specs() -> list[OpSpec]:
    specs = [
        OpSpec(name, getattr(tp, name), (kernel,), arrays().map(lambda a: Call((a,))), ref)
        for name, kernel, ref in _unary_rows()
    ]

    @st.composite
    def with_alpha(draw: Any) -> Call:
        x = draw(arrays())
        return Call((x, draw(_attr_scalars()))) if draw(st.integers(0, 3)) else Call((x,))

    @st.composite
    def clip(draw: Any) -> Call:
        return Call((draw(arrays()), draw(_attr_scalars()), draw(_attr_scalars())))

    specs += [
        OpSpec("leaky_relu", tp.leaky_relu, ("LeakyRelu",), with_alpha(), _leaky_relu_ref),
        OpSpec("step", tp.step, ("Step",), with_alpha(), _step_ref),
        OpSpec("clip_by_value", tp.clip_by_value, ("ClipByValue",), clip(), _clip_ref),
    ]
    return specs


def _binary_specs() -> list[OpSpec]:
    return [
        OpSpec(name, getattr(tp, name), (kernel,), binary_calls(), _binary_ref(f, kind))
        for name, kernel, f, kind in _BINARY
    ] + [
        OpSpec("add_n", tp.add_n, ("AddN",), add_n_calls(), _add_n_ref),
        OpSpec("where", tp.where, ("Select",), where_calls(), _where_ref),
    ]


def _reduction_specs() -> list[OpSpec]:
    return [
        OpSpec("sum", tp.sum, ("Sum",), reduce_calls(), _reduce_ref(np.sum, "count")),
        OpSpec("prod", tp.prod, ("Prod",), reduce_calls(), _reduce_ref(np.prod, "count")),
        OpSpec("mean", tp.mean, ("Mean",), reduce_calls(), _reduce_ref(np.mean, "mean")),
        OpSpec("max", tp.max, ("Max",), reduce_calls(), _reduce_ref(np.max, "numeric")),
        OpSpec("min", tp.min, ("Min",), reduce_calls(), _reduce_ref(np.min, "numeric")),
        OpSpec("all", tp.all, ("All",), reduce_calls(), _reduce_ref(np.all, "bool")),
        OpSpec("any", tp.any, ("Any",), reduce_calls(), _reduce_ref(np.any, "bool")),
        OpSpec("argmax", tp.argmax, ("ArgMax",), arg_calls(), _arg_ref(np.argmax)),
        OpSpec("argmin", tp.argmin, ("ArgMin",), arg_calls(), _arg_ref(np.argmin)),
        OpSpec("cumsum", tp.cumsum, ("Cumsum",), scan_calls(), _scan_ref(np.cumsum, 0)),
        OpSpec("cumprod", tp.cumprod, ("Cumprod",), scan_calls(), _scan_ref(np.cumprod, 1)),
    ]


def _shape_specs() -> list[OpSpec]:
    return [
        OpSpec("matmul", tp.matmul, ("BatchMatMul",), matmul_calls(), _matmul_ref, inner=("reshape",)),
        OpSpec("einsum", tp.einsum, ("Einsum",), einsum_calls(), _einsum_ref),
        OpSpec("reshape", tp.reshape, ("Reshape",), x_and(_reshape_targets), _reshape_ref),
        OpSpec("flatten", tp.flatten, ("Reshape",), x_and(lambda x: axis_for(x.ndim)), _flatten_ref),
        OpSpec("transpose", tp.transpose, ("Transpose",), x_and(_perms), _transpose_ref),
        OpSpec("broadcast_to", tp.broadcast_to, ("BroadcastTo",), x_and(_broadcast_targets), _broadcast_to_ref),
        OpSpec("squeeze", tp.squeeze, ("Reshape",), x_and(lambda x: axes_for(x.ndim)), _squeeze_ref),
        OpSpec("expand_dims", tp.expand_dims, ("Reshape",), x_and(lambda x: axis_for(x.ndim + 1)), _expand_dims_ref),
        OpSpec("fill", tp.fill, ("Fill",), fill_calls(), _fill_ref),
        OpSpec("full", tp.full, ("Fill",), fill_calls(), _fill_ref, inner=("fill",)),
        OpSpec("zeros", tp.zeros, ("Fill",), zeros_calls(), _zeros_ref(0), inner=("fill",)),
        OpSpec("ones", tp.ones, ("Fill",), zeros_calls(), _zeros_ref(1), inner=("fill",)),
        OpSpec("one_hot", tp.one_hot, ("OneHot",), one_hot_calls(), _one_hot_ref),
        OpSpec("range", tp.range, ("Range",), range_calls(), _range_ref),
        OpSpec("linspace", tp.linspace, ("Range", "Concat"), linspace_calls(), _linspace_ref),
        OpSpec("top_k", tp.top_k, ("TopK",), top_k_calls(), _top_k_ref),
        OpSpec("cast", tp.cast, ("Cast",), cast_calls(), _cast_ref),
        OpSpec("tensor", tp.tensor, (), tensor_calls(), None),
        OpSpec("as_tensor", tp.as_tensor, (), tensor_calls(), None, inner=("tensor",)),
        OpSpec("from_dlpack", tp.from_dlpack, (), tensor_calls().map(lambda c: Call(c.args)), None),
        OpSpec("sum_to_shape", tp.sum_to_shape, ("Sum",), sum_to_shape_calls(), _sum_to_shape_ref, inner=("sum",)),
        OpSpec("concat", tp.concat, ("Concat",), list_calls(new_axis=False), _concat_ref),
        OpSpec("stack", tp.stack, ("Pack",), list_calls(new_axis=True), _join_ref(np.stack)),
        OpSpec("unstack", tp.unstack, ("Unpack",), x_and(lambda x: axis_for(x.ndim)), _unstack_ref),
        OpSpec("split", tp.split, ("SplitV",), split_calls(), _split_ref),
        OpSpec("slice", tp.slice, ("Slice",), slice_calls(), _slice_ref),
        OpSpec("strided_slice", tp.strided_slice, ("StridedSlice",), strided_slice_calls(), None),
        OpSpec("pad", tp.pad, ("PadV2",), pad_calls(mirror=False), _pad_ref),
        OpSpec("mirror_pad", tp.mirror_pad, ("MirrorPad",), pad_calls(mirror=True), _mirror_pad_ref),
        OpSpec("tile", tp.tile, ("Tile",), x_and(_tile_reps), _tile_ref),
        OpSpec("reverse", tp.reverse, ("Reverse",), x_and(lambda x: axes_for(x.ndim)), _reverse_ref),
        OpSpec("gather", tp.gather, ("GatherV2",), gather_calls(), _gather_ref),
        OpSpec("gather_nd", tp.gather_nd, ("GatherNd",), gather_nd_calls(), _gather_nd_ref),
        OpSpec("scatter_nd", tp.scatter_nd, ("ScatterNd",), scatter_nd_calls(), _scatter_nd_ref),
        OpSpec("unsorted_segment_sum", tp.unsorted_segment_sum, ("UnsortedSegmentSum",), segment_calls(), _segment_ref),
    ]


def _nn_specs() -> list[OpSpec]:
    conv_inner = ("reshape",)
    return [
        OpSpec("softmax", tp.softmax, ("Softmax",), nn_axis_calls(), _softmax_ref),
        OpSpec("log_softmax", tp.log_softmax, ("Max", "Sub", "Exp", "Sum", "Log"), nn_axis_calls(), None),
        OpSpec("log_sum_exp", tp.log_sum_exp, ("Max", "Sub", "Exp", "Sum", "Log", "Add"), reduce_calls(), None),
        OpSpec("conv2d", tp.conv2d, ("Conv2D",), conv_calls(), None, inner=conv_inner),
        OpSpec("conv2d_transpose", tp.conv2d_transpose, ("Conv2DBackpropInput",), conv_calls(True), None, conv_inner),
        OpSpec("max_pool", tp.max_pool, ("MaxPool",), pool_calls(), None, inner=conv_inner),
        OpSpec("avg_pool", tp.avg_pool, ("AvgPool",), pool_calls(), None, inner=conv_inner),
        OpSpec(
            "conv2d_backprop_input",
            _nn.conv2d_backprop_input,
            ("Conv2DBackpropInput",),
            backprop_input_calls(),
            None,
        ),
        OpSpec(
            "conv2d_backprop_filter",
            _nn.conv2d_backprop_filter,
            ("Conv2DBackpropFilter",),
            backprop_filter_calls(),
            None,
        ),
        OpSpec("max_pool_grad", _nn.max_pool_grad, ("MaxPoolGrad",), pool_grad_calls(True), None),
        OpSpec("avg_pool_grad", _nn.avg_pool_grad, ("AvgPoolGrad",), pool_grad_calls(False), None),
    ]


def _other_specs() -> list[OpSpec]:
    return [
        OpSpec(
            "random_uniform",
            tp.random_uniform,
            ("RandomUniform",),
            random_calls(normal=False),
            _random_ref(False),
            random=True,
        ),
        OpSpec(
            "random_normal",
            tp.random_normal,
            ("RandomNormal",),
            random_calls(normal=True),
            _random_ref(True),
            random=True,
        ),
        OpSpec(
            "dropout",
            tp.dropout,
            ("RandomUniform", "GreaterEqual", "Select"),
            dropout_calls(),
            None,
            inner=("random_uniform", "where", "div"),
            random=True,
        ),
        OpSpec(
            "moving_average",
            tp.moving_average,
            ("Sub", "Multiply"),
            moving_average_calls(),
            None,
            inner=("sub", "mul", "div", "add", "pow"),
        ),
        OpSpec("norm", tp.norm, ("Sqrt", "Square", "Sum"), norm_calls(), None, inner=("sum", "max", "min", "pow")),
    ]


@st.composite
def optimizer_calls(draw: Any) -> Call:
    """A variable's initial value (any dtype) and a gradient: mostly of its shape and dtype, sometimes not."""
    w = draw(arrays(max_rank=4))
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return Call((w, draw(arrays(max_rank=4))))
    if kind == 1:
        return Call((w, draw(scalars())))
    return Call((w, draw(arrays((w.dtype.name,), shape=w.shape))))


def _optimizer_steps(make: Callable[[], tp.train.Optimizer]) -> Callable[[Any, Any], tp.Tensor]:
    """Two steps of the optimizer on a new variable holding ``w``, with gradient ``g`` (the second with slots)."""

    def steps(w: Any, g: Any) -> tp.Tensor:
        v = tp.variable(w)
        opt = make()
        opt.apply_gradients({v: g})
        opt.apply_gradients({v: g})
        return v

    return steps


def _train_specs() -> list[OpSpec]:
    """The optimizers' updates (ops, or the backend's fused update per variable), through apply_gradients."""
    optimizers: list[tuple[str, Callable[[], tp.train.Optimizer], tuple[str, ...]]] = [
        ("SGD", lambda: tp.train.SGD(0.1), ("Multiply", "Sub")),
        ("Momentum", lambda: tp.train.Momentum(0.1, 0.9, use_nesterov=True), ("Multiply", "Add", "Sub")),
        ("Adam", lambda: tp.train.Adam(0.01), ("Multiply", "Add", "Square", "Sqrt", "RealDiv", "Sub")),
        ("RMSProp", lambda: tp.train.RMSProp(0.01, momentum=0.9, centered=True), ("Multiply", "Add", "Sqrt")),
        ("Adagrad", lambda: tp.train.Adagrad(0.1), ("Add", "Square", "Sqrt", "RealDiv")),
    ]
    return [
        OpSpec(f"{name}.apply_gradients", _optimizer_steps(make), kernels, optimizer_calls(), None)
        for name, make, kernels in optimizers
    ]


SPECS: list[OpSpec] = _unary_specs() + _binary_specs() + _reduction_specs() + _shape_specs() + _nn_specs()
SPECS += _other_specs() + _train_specs()

# Public names that are the same function as a tabled op under another name.
ALIASES = {"multiply": "mul", "divide": "div", "subtract": "sub", "floor_divide": "floor_div"}
ALIASES["arange"] = "range"


# -- running a call and checking its outcome ---------------------------------------------------------------------

BUILTIN_BASES = (ValueError, TypeError, IndexError, LookupError, RuntimeError, ArithmeticError)


def materialise(value: Any) -> Any:
    """Host arrays as tensors on the active backend (lists of them too), as the conformance suite makes them;
    Raw values unwrapped; anything else as it is."""
    return value.value if isinstance(value, Raw) else _to_tensors(value)


def unwrapped(value: Any) -> Any:
    """The reference's view of an argument: host arrays as they are, Raw values unwrapped."""
    return value.value if isinstance(value, Raw) else value


@dataclass
class Outcome:
    outputs: list[Any] | None  # Tensors, when the op returned
    error: BaseException | None
    warnings: list[warnings_module.WarningMessage]

    def describe(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {self.error}"
        assert self.outputs is not None
        return "returned " + ", ".join(f"{o.dtype}{list(o.shape)}" for o in self.outputs)


def run(spec: OpSpec, call: Call) -> Outcome:
    """Call the op on the active backend, recording any warning and catching any exception."""
    args = tuple(materialise(a) for a in call.args)
    kwargs = {k: materialise(v) for k, v in call.kwargs.items()}
    with warnings_module.catch_warnings(record=True) as caught:
        warnings_module.simplefilter("always")
        try:
            out = spec.fn(*args, **kwargs)
        except Exception as exc:
            return Outcome(None, exc, list(caught))
    outputs = list(out) if isinstance(out, list | tuple) else [out]
    return Outcome(outputs, None, list(caught))


# The numpy backend's Add, Sub, Multiply, AddN, Sum and BatchMatMul keep NumPy's own RuntimeWarning for inf - inf
# and overflow: they are on every gradient's hot path, and np.errstate around them would cost 1.8 us a call
# (0.8 us for np.add itself on a small array). A documented choice of the backend (see its _reduction.py),
# allowed here and nowhere else.
_HOT_PATH_FILES = tuple(
    os.path.join(*parts)
    for parts in [("tensorplug", "kernel_factories.py")]
    + [("tensorplug_numpy", name) for name in ("_reduction.py", "_binary.py", "_linalg.py")]
)
_HOT_PATH_MESSAGE = re.compile(r"(invalid value|overflow) encountered in (add|subtract|multiply|reduce|matmul)$")


def is_hot_path_warning(w: warnings_module.WarningMessage) -> bool:
    return (
        issubclass(w.category, RuntimeWarning)
        and w.filename.endswith(_HOT_PATH_FILES)
        and bool(_HOT_PATH_MESSAGE.search(str(w.message)))
    )


def _argument_texts(call: Call) -> list[str]:
    """What a message may quote to name the offending arguments: tensors as ``dtype[dims]``, other values' reprs."""
    texts: list[str] = []

    def add(value: Any) -> None:
        value = unwrapped(value)
        if isinstance(value, np.ndarray):
            dims = ", ".join(str(d) for d in value.shape)
            # its shape (under any dtype: the op may have promoted it), its dtype, or its rank (for an axis error)
            texts.extend(f"{dtype}[{dims}]" for dtype in DTYPES)
            texts.extend((str(value.shape), str(value.dtype), f"rank {value.ndim}"))
        elif isinstance(value, list | tuple) and value and all(isinstance(v, np.ndarray) for v in value):
            for v in value:
                add(v)
        else:
            texts.extend({repr(value), str(value), type(value).__name__})
            if isinstance(value, list | tuple):  # an entry of a sequence attr: the offending axis, say
                texts.extend(repr(v) for v in value if not isinstance(v, np.ndarray))

    for value in (*call.args, *call.kwargs.values()):
        add(value)
    return texts


def contract_violations(spec: OpSpec, call: Call, outcome: Outcome, backend: str) -> list[str]:
    """How ``outcome`` breaks the contract: a tensorplug error naming the op and its arguments, or tensors."""
    problems = []
    if outcome.error is not None:
        exc = outcome.error
        message = str(exc)
        if not isinstance(exc, tp.TensorplugError):
            problems.append(f"a raw {type(exc).__module__}.{type(exc).__name__} escaped: {exc!r}")
        elif not isinstance(exc, BUILTIN_BASES):
            problems.append(f"{type(exc).__name__} subclasses no builtin error class (ValueError, TypeError, ...)")
        names = (spec.name, *spec.kernels, *spec.inner)
        if not any(name in message for name in names):
            problems.append(f"the message names none of {names}: {message!r}")
        if isinstance(exc, tp.KernelError) and repr(backend) not in message:
            problems.append(f"the KernelError does not name backend {backend!r}: {message!r}")
        if not any(text and text in message for text in _argument_texts(call)):
            problems.append(f"the message names none of the arguments {call!r}: {message!r}")
    else:
        assert outcome.outputs is not None
        for o in outcome.outputs:
            if not isinstance(o, tp.Tensor):
                problems.append(f"returned a {type(o).__name__}, not a Tensor")
                continue
            host = o.numpy()
            if o.dtype not in DTYPES or host.dtype.name != o.dtype or host.shape != o.shape:
                problems.append(
                    f"a tensor whose dtype/shape disagree: {o.dtype}{o.shape} holds {host.dtype}{host.shape}"
                )
    for w in outcome.warnings:
        if is_hot_path_warning(w):
            continue
        problems.append(f"a warning escaped: {w.category.__name__}: {w.message} ({w.filename}:{w.lineno})")
    return problems
