"""tensorplug: ops, kernel and gradient registries and tape autodiff, with backends as plugins.

>>> import tensorplug as tp
>>> x = tp.tensor([1.0, 2.0, 3.0])
>>> tp.grad(lambda x: tp.sum(x * x))(x).tolist()
[2.0, 4.0, 6.0]
"""

from tensorplug import datasets, kernel_names, losses, ops, testing, train
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
from tensorplug._coverage import Coverage, CoverageRow, coverage
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
    CopyError,
    DTypeError,
    FallbackWarning,
    GradientError,
    IndexingError,
    KernelError,
    KernelNotFoundError,
    NoBackendError,
    PluginError,
    PluginWarning,
    RegistrationError,
    ShapeError,
    TensorplugError,
    UnsupportedOperationError,
)
from tensorplug._memory import memory
from tensorplug._overrides import (
    GradientSet,
    gradient_overrides,
    gradient_sets,
    register_gradient_set,
    unregister_gradient_set,
    use_gradients,
)
from tensorplug._plugins import PluginInfo, plugins
from tensorplug._profile import KernelProfile, KernelSummary, Profile, Timing, profile
from tensorplug._profile import time as time  # public as tp.time, but not in __all__ (see below)
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

# Every op, family by family (each module lists its public ops in __all__).
from tensorplug.ops._binary import *  # noqa: F403
from tensorplug.ops._composite import *  # noqa: F403
from tensorplug.ops._convert import *  # noqa: F403
from tensorplug.ops._indexing import *  # noqa: F403
from tensorplug.ops._linalg import *  # noqa: F403
from tensorplug.ops._nn import *  # noqa: F403
from tensorplug.ops._random import *  # noqa: F403
from tensorplug.ops._reduction import *  # noqa: F403
from tensorplug.ops._shape import *  # noqa: F403
from tensorplug.ops._unary import *  # noqa: F403


def variable(initial_value: object, trainable: bool = True, name: str | None = None, dtype: object = None) -> Variable:
    """Make a Variable (a mutable tensor) from any value ``tp.tensor`` accepts.

    >>> import tensorplug as tp
    >>> tp.variable([1.0, 2.0], name="bias").name
    'bias'
    """
    return Variable(initial_value, trainable, name, dtype)


__version__ = "0.1.0"

__all__ = [
    "DTYPES",
    "Backend",
    "BackendError",
    "BackendSpec",
    "CopyError",
    "Coverage",
    "CoverageRow",
    "DType",
    "DTypeError",
    "FallbackWarning",
    "GradientError",
    "GradientSet",
    "GradientSpec",
    "IndexingError",
    "KernelError",
    "KernelProfile",
    "KernelSummary",
    "KernelNotFoundError",
    "KernelSpec",
    "NoBackendError",
    "PluginError",
    "PluginInfo",
    "PluginWarning",
    "Profile",
    "RegistrationError",
    "ShapeError",
    "Tensor",
    "TensorplugError",
    "Timing",
    "UnsupportedOperationError",
    "Variable",
    "VariableGrads",
    "backend",
    "bool_",
    "coverage",
    "custom_grad",
    "datasets",
    "float32",
    "float64",
    "get_backend",
    "get_gradient",
    "get_kernel",
    "grad",
    "gradient_overrides",
    "gradient_sets",
    "gradient_stack",
    "grads",
    "hookimpl",
    "int32",
    "int64",
    "kernel_names",
    "kernel_stack",
    "kernels_for_backend",
    "list_backends",
    "losses",
    "memory",
    "no_grad",
    "ops",
    "plugins",
    "profile",
    "register_backend",
    "register_gradient",
    "register_gradient_set",
    "register_kernel",
    "remove_backend",
    "run_kernel",
    "set_backend",
    "stop_gradient",
    "testing",
    "train",
    "unregister_gradient",
    "unregister_gradient_set",
    "use_gradients",
    "unregister_kernel",
    "value_and_grad",
    "value_and_grads",
    "variable",
    "variable_grads",
]
__all__ += ops.__all__
# tp.time is public but stays out of __all__: `from tensorplug import *` must not shadow the time module.

from tensorplug._plugins import load_plugins as _load_plugins  # noqa: E402

_load_plugins()
