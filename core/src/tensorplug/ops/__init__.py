"""Ops: the user-facing, backend-agnostic functions. Each validates, then dispatches kernels."""

from tensorplug.ops._binary import (
    add,
    div,
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    maximum,
    mul,
    not_equal,
    pow,
    sub,
    where,
)
from tensorplug.ops._composite import moving_average
from tensorplug.ops._convert import as_tensor, cast, tensor
from tensorplug.ops._linalg import matmul
from tensorplug.ops._nn import log_softmax, log_sum_exp, softmax
from tensorplug.ops._reduction import max, mean, sum
from tensorplug.ops._shape import (
    broadcast_to,
    expand_dims,
    fill,
    full,
    ones,
    ones_like,
    reshape,
    sum_to_shape,
    transpose,
    zeros,
    zeros_like,
)
from tensorplug.ops._unary import exp, identity, log, neg, relu, sigmoid, sqrt, square, tanh

__all__ = [
    "add", "as_tensor", "broadcast_to", "cast", "div", "equal", "exp", "expand_dims", "fill", "full",
    "greater", "greater_equal", "identity", "less", "less_equal", "log", "log_softmax", "log_sum_exp",
    "matmul", "max", "maximum", "mean", "moving_average", "mul", "neg", "not_equal", "ones", "ones_like",
    "pow", "relu", "reshape", "sigmoid", "softmax", "sqrt", "square", "sub", "sum", "sum_to_shape",
    "tanh", "tensor", "transpose", "where", "zeros", "zeros_like",
]  # fmt: skip
