"""tensorplug: ops, kernel and gradient registries and tape autodiff, with backends as plugins.

>>> import tensorplug as tp
>>> x = tp.tensor([1.0, 2.0, 3.0])
>>> tp.grad(lambda x: tp.sum(x * x))(x).tolist()
[2.0, 4.0, 6.0]
"""

from tensorplug import kernel_names, losses, ops, testing
from tensorplug._autodiff import (
    VariableGrads,
    custom_grad,
    grad,
    grads,
    stop_gradient,
    value_and_grad,
    value_and_grads,
    variable_grads,
)
from tensorplug._backend import Backend
from tensorplug._dtypes import DTYPES, DType, bool_, float32, float64, int32, int64
from tensorplug._engine import (
    backend,
    get_backend,
    list_backends,
    register_backend,
    remove_backend,
    run_kernel,
    set_backend,
)
from tensorplug._errors import (
    BackendError,
    DTypeError,
    GradientError,
    KernelError,
    KernelNotFoundError,
    NoBackendError,
    PluginError,
    PluginWarning,
    RegistrationError,
    ShapeError,
    TensorplugError,
)
from tensorplug._plugins import PluginInfo, plugins
from tensorplug._registration import (
    get_gradient,
    get_kernel,
    gradient_stack,
    kernel_stack,
    kernels_for_backend,
    register_gradient,
    register_kernel,
    unregister_gradient,
    unregister_kernel,
)
from tensorplug._registry import BackendSpec, GradientSpec, KernelSpec
from tensorplug._state import no_grad
from tensorplug._tensor import Tensor, Variable
from tensorplug.hookspecs import hookimpl
from tensorplug.ops import (
    add,
    broadcast_to,
    cast,
    div,
    equal,
    exp,
    expand_dims,
    fill,
    full,
    greater,
    greater_equal,
    identity,
    less,
    less_equal,
    log,
    log_softmax,
    log_sum_exp,
    matmul,
    max,
    maximum,
    mean,
    moving_average,
    mul,
    neg,
    not_equal,
    ones,
    ones_like,
    pow,
    relu,
    reshape,
    sigmoid,
    softmax,
    sqrt,
    square,
    sub,
    sum,
    tanh,
    tensor,
    transpose,
    where,
    zeros,
    zeros_like,
)


def variable(initial_value: object, trainable: bool = True, name: str | None = None, dtype: object = None) -> Variable:
    """Make a Variable (a mutable tensor) from any value ``tp.tensor`` accepts.

    >>> import tensorplug as tp
    >>> tp.variable([1.0, 2.0], name="bias").name
    'bias'
    """
    return Variable(initial_value, trainable, name, dtype)


__version__ = "0.1.0"

__all__ = [
    "DTYPES", "Backend", "BackendError", "BackendSpec", "DType", "DTypeError", "GradientError", "GradientSpec",
    "KernelError", "KernelNotFoundError", "KernelSpec", "NoBackendError", "PluginError", "PluginInfo",
    "PluginWarning", "RegistrationError", "ShapeError", "Tensor", "TensorplugError", "Variable", "VariableGrads",
    "add", "backend", "bool_", "broadcast_to", "cast", "custom_grad", "div", "equal", "exp", "expand_dims",
    "fill", "float32", "float64", "full", "get_backend", "get_gradient", "get_kernel", "grad", "gradient_stack",
    "grads", "greater", "greater_equal", "hookimpl", "identity", "int32", "int64", "kernel_names", "kernel_stack",
    "kernels_for_backend", "less", "less_equal", "list_backends", "log", "log_softmax", "log_sum_exp", "losses",
    "matmul", "max", "maximum", "mean", "moving_average", "mul", "neg", "no_grad", "not_equal", "ones",
    "ones_like", "ops", "plugins", "pow", "register_backend", "register_gradient", "register_kernel", "relu",
    "remove_backend", "reshape", "run_kernel", "set_backend", "sigmoid", "softmax", "sqrt", "square",
    "stop_gradient", "sub", "sum", "tanh", "tensor", "testing", "transpose", "unregister_gradient", "unregister_kernel",
    "value_and_grad", "value_and_grads", "variable", "variable_grads", "where", "zeros", "zeros_like",
]  # fmt: skip

from tensorplug._plugins import load_plugins as _load_plugins  # noqa: E402

_load_plugins()
