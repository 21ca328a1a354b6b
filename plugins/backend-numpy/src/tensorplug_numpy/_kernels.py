"""NumPy kernels: ``kernel(inputs, attrs, backend)`` on numpy arrays, one line each where possible.

Inputs arrive already promoted to one dtype by the core's ops; a kernel
returns an array of the dtype the catalogue says (numpy would otherwise
widen int32 sums to int64, say).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Kernel = Callable[[dict[str, Any], dict[str, Any], Any], Any]


def unary(fn: Callable[[Any], Any]) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["x"])

    kernel.__name__ = getattr(fn, "__name__", "unary")
    return kernel


def binary(fn: Callable[[Any, Any], Any]) -> Kernel:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return fn(inputs["a"], inputs["b"])

    kernel.__name__ = getattr(fn, "__name__", "binary")
    return kernel


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fn`` with numpy's floating-point warnings off: inf and NaN results are the contract."""

    def quiet_fn(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args)

    quiet_fn.__name__ = getattr(fn, "__name__", "quiet")
    return quiet_fn


def _sigmoid(x: Any) -> Any:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # equal to 1 / (1 + exp(-x)), with no overflow


# -- elementwise unary ---------------------------------------------------------
neg = unary(np.negative)
exp = unary(quiet(np.exp))
log = unary(quiet(np.log))
sqrt = unary(quiet(np.sqrt))
square = unary(np.square)
tanh = unary(np.tanh)
sigmoid = unary(_sigmoid)
relu = unary(lambda x: np.maximum(x, 0))

# -- elementwise binary --------------------------------------------------------
add = binary(np.add)
sub = binary(np.subtract)
multiply = binary(np.multiply)
real_div = binary(quiet(np.true_divide))
pow_ = binary(quiet(np.power))
maximum = binary(np.maximum)
equal = binary(np.equal)
not_equal = binary(np.not_equal)
less = binary(np.less)
less_equal = binary(np.less_equal)
greater = binary(np.greater)
greater_equal = binary(np.greater_equal)


def select(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.where(inputs["condition"], inputs["t"], inputs["e"])


# -- reductions ------------------------------------------------------------------


def sum_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return np.sum(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)


def mean(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    count = 1
    for a in attrs["axis"]:
        count *= x.shape[a]
    total = np.sum(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)
    with np.errstate(all="ignore"):
        return np.divide(total, count, dtype=x.dtype)  # NaN over zero elements, without a warning


def max_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.max(inputs["x"], axis=attrs["axis"], keepdims=attrs["keep_dims"])


# -- linear algebra --------------------------------------------------------------


def batch_mat_mul(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    a, b = inputs["a"], inputs["b"]
    if attrs["transpose_a"]:
        a = np.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = np.swapaxes(b, -1, -2)
    return np.matmul(a, b)


# -- shape and dtype -------------------------------------------------------------


def reshape(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.reshape(inputs["x"], attrs["shape"])


def transpose(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.transpose(inputs["x"], attrs["perm"])


def broadcast_to(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.broadcast_to(inputs["x"], attrs["shape"])


def cast(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    with np.errstate(all="ignore"):
        return inputs["x"].astype(attrs["dtype"])


def identity(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"]  # storage is immutable, so sharing it is safe


def fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.full(attrs["shape"], attrs["value"], dtype=attrs["dtype"])


# -- neural network --------------------------------------------------------------


def softmax(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x, dim = inputs["logits"], attrs["dim"]
    if x.size == 0:
        return np.empty_like(x)
    e = np.exp(x - np.max(x, axis=dim, keepdims=True))
    return e / np.sum(e, axis=dim, keepdims=True)
