"""tensorplug: ops, kernel and gradient registries and tape autodiff, with backends as plugins.

>>> import tensorplug as tp
>>> x = tp.tensor([1.0, 2.0, 3.0])
>>> tp.grad(lambda x: tp.sum(x * x))(x).tolist()
[2.0, 4.0, 6.0]

Loaded on first use, to keep ``import tensorplug`` cheap, yet listed by
``dir(tp)``: ``tp.function`` (trace and replay), ``tp.train`` (optimizers),
``tp.initializers`` (weight initialisers), ``tp.datasets``, ``tp.testing``,
``tp.profile``, ``tp.time``, ``tp.debug``, ``tp.coverage``, ``tp.memory``, ``tp.persist``, ``tp.export`` (write a
traced function in a format an exporter plugin adds: ``tp.exporters()`` lists them), ``tp.losses``, the functions
that register, unregister and list registry entries (``tp.register_kernel``, ``tp.kernel_stack``,
``tp.use_gradients``...), and the checkpoints: ``tp.save``, ``tp.load``, ``tp.restore`` (the ``safetensors``
package is imported by the first of them called).
"""

from types import ModuleType
from typing import TYPE_CHECKING, Any

from tensorplug import kernel_names, ops
from tensorplug._autodiff import _backward
from tensorplug._autodiff._tape import (
    VariableGrads,
    custom_grad,
    grad,
    grads,
    stop_gradient,
    value_and_grad,
    value_and_grads,
    variable_grads,
)
from tensorplug._plugins._loading import plugins
from tensorplug._plugins._notes import PluginInfo
from tensorplug._runtime import _engine
from tensorplug._runtime._backend import Backend
from tensorplug._runtime._dtypes import DTYPES, DType, bool_, float32, float64, int32, int64
from tensorplug._runtime._engine import (
    backend,
    get_backend,
    list_backends,
    register_backend,
    remove_backend,
    run_kernel,
    set_backend,
)
from tensorplug._runtime._errors import (
    BackendError,
    CopyError,
    DTypeError,
    ExportError,
    FallbackWarning,
    FunctionWarning,
    GradientError,
    IndexingError,
    InvalidArgumentError,
    KernelError,
    KernelNotFoundError,
    NoBackendError,
    NonFiniteError,
    PluginError,
    PluginWarning,
    RegistrationError,
    ShapeError,
    TensorplugError,
    UnsupportedOperationError,
)
from tensorplug._runtime._registry import (
    BackendSpec,
    DecompositionSpec,
    ExporterSpec,
    GradientSet,
    GradientSpec,
    KernelSpec,
    TranslationSpec,
)
from tensorplug._runtime._state import no_grad
from tensorplug._runtime._tensor import Tensor
from tensorplug._runtime._variable import Variable
from tensorplug.hookspecs import CONTRACT as PLUGIN_CONTRACT
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


def _load_gradient_programs() -> _backward.GradientPrograms:
    """The gradient programs of the tracing layer (imported at the first backprop: ``import tensorplug`` stays
    cheap)."""
    from tensorplug._tracing import _gradient_programs

    return _gradient_programs


# The core's gradients are replayed from programs traced once per signature.
_backward.replay_gradients_with(_load_gradient_programs)
# The tape keeps a core kernel's inputs in the order its reference entry lists them (kernel_names.INPUTS, generated
# from the entries: the kernel reference itself is not imported to record a call).
_engine.input_orders_from(kernel_names.INPUTS.get)

# Loaded on first use (``tp.train``, ``tp.profile``...), so that ``import tensorplug`` stays cheap: each of
# these modules costs milliseconds of dataclass and class creation that most programs never need.
_LAZY: dict[str, tuple[str, str | None]] = {
    "coverage": ("tensorplug._inspection._coverage", "coverage"),
    "Coverage": ("tensorplug._inspection._coverage", "Coverage"),
    "CoverageRow": ("tensorplug._inspection._coverage", "CoverageRow"),
    "datasets": ("tensorplug.datasets", None),
    "initializers": ("tensorplug.initializers", None),
    "memory": ("tensorplug._inspection._memory", "memory"),
    "testing": ("tensorplug.testing", None),
    "train": ("tensorplug.train", None),
    "profile": ("tensorplug._inspection._profile", "profile"),
    "time": (
        "tensorplug._inspection._profile",
        "time",
    ),  # public as tp.time, but not in __all__ (it would shadow `time`)
    "Profile": ("tensorplug._inspection._profile", "Profile"),
    "KernelProfile": ("tensorplug._inspection._profile", "KernelProfile"),
    "KernelSummary": ("tensorplug._inspection._profile", "KernelSummary"),
    "Timing": ("tensorplug._inspection._profile", "Timing"),
    "debug": ("tensorplug._inspection._debug", "debug"),
    "function": ("tensorplug._tracing._function", "function"),
    "Function": ("tensorplug._tracing._function", "Function"),
    "Program": ("tensorplug._runtime._program", "Program"),
    "Step": ("tensorplug._runtime._program", "Step"),
    "Assign": ("tensorplug._runtime._program", "Assign"),
    "HostInput": ("tensorplug._runtime._program", "HostInput"),
    "TensorSpec": ("tensorplug._runtime._program", "TensorSpec"),
    "StepLowering": ("tensorplug._runtime._program", "StepLowering"),
    "Constant": ("tensorplug._runtime._program", "Constant"),
    "Replay": ("tensorplug._runtime._program", "Replay"),
    "generate_replay": ("tensorplug._tracing._pipeline", "generate_replay"),
    "persist": ("tensorplug._runtime._lazy", "persist"),
    "save": ("tensorplug.train._checkpoint", "save"),
    "load": ("tensorplug.train._checkpoint", "load"),
    "restore": ("tensorplug.train._checkpoint", "restore"),
    "Checkpoint": ("tensorplug.train._checkpoint", "Checkpoint"),
    "CheckpointError": ("tensorplug.train._checkpoint", "CheckpointError"),
    "export": ("tensorplug._tracing._export", "export"),
    "ExportRequest": ("tensorplug._tracing._export", "ExportRequest"),
    "losses": ("tensorplug.losses", None),
    # The registration functions (the loader registers plugins' declarations without them).
    "decomposition_stack": ("tensorplug._plugins._decompositions", "decomposition_stack"),
    "decompositions": ("tensorplug._plugins._decompositions", "decompositions"),
    "register_decomposition": ("tensorplug._plugins._decompositions", "register_decomposition"),
    "unregister_decomposition": ("tensorplug._plugins._decompositions", "unregister_decomposition"),
    "exporters": ("tensorplug._plugins._exporters", "exporters"),
    "register_exporter": ("tensorplug._plugins._exporters", "register_exporter"),
    "unregister_exporter": ("tensorplug._plugins._exporters", "unregister_exporter"),
    "gradient_overrides": ("tensorplug._plugins._overrides", "gradient_overrides"),
    "gradient_sets": ("tensorplug._plugins._overrides", "gradient_sets"),
    "register_gradient_set": ("tensorplug._plugins._overrides", "register_gradient_set"),
    "unregister_gradient_set": ("tensorplug._plugins._overrides", "unregister_gradient_set"),
    "use_gradients": ("tensorplug._plugins._overrides", "use_gradients"),
    "get_gradient": ("tensorplug._plugins._registration", "get_gradient"),
    "get_kernel": ("tensorplug._plugins._registration", "get_kernel"),
    "gradient_stack": ("tensorplug._plugins._registration", "gradient_stack"),
    "kernel_stack": ("tensorplug._plugins._registration", "kernel_stack"),
    "kernels_for_backend": ("tensorplug._plugins._registration", "kernels_for_backend"),
    "register_gradient": ("tensorplug._plugins._registration", "register_gradient"),
    "register_kernel": ("tensorplug._plugins._registration", "register_kernel"),
    "unregister_gradient": ("tensorplug._plugins._registration", "unregister_gradient"),
    "unregister_kernel": ("tensorplug._plugins._registration", "unregister_kernel"),
    "register_translation": ("tensorplug._plugins._translations", "register_translation"),
    "translation_stack": ("tensorplug._plugins._translations", "translation_stack"),
    "translations": ("tensorplug._plugins._translations", "translations"),
    "unregister_translation": ("tensorplug._plugins._translations", "unregister_translation"),
}

if TYPE_CHECKING:
    from tensorplug import datasets, initializers, losses, train

    testing: ModuleType  # not imported here, as it imports the package: its names are typed in tensorplug.testing
    from tensorplug._inspection._coverage import Coverage, CoverageRow, coverage
    from tensorplug._inspection._debug import debug
    from tensorplug._inspection._memory import memory
    from tensorplug._inspection._profile import KernelProfile, KernelSummary, Profile, Timing, profile
    from tensorplug._inspection._profile import time as time
    from tensorplug._plugins._decompositions import (
        decomposition_stack,
        decompositions,
        register_decomposition,
        unregister_decomposition,
    )
    from tensorplug._plugins._exporters import exporters, register_exporter, unregister_exporter
    from tensorplug._plugins._overrides import (
        gradient_overrides,
        gradient_sets,
        register_gradient_set,
        unregister_gradient_set,
        use_gradients,
    )
    from tensorplug._plugins._registration import (
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
    from tensorplug._plugins._translations import (
        register_translation,
        translation_stack,
        translations,
        unregister_translation,
    )
    from tensorplug._runtime._lazy import persist
    from tensorplug._runtime._program import (
        Assign,
        Constant,
        HostInput,
        Program,
        Replay,
        Step,
        StepLowering,
        TensorSpec,
    )
    from tensorplug._tracing._export import ExportRequest, export
    from tensorplug._tracing._function import Function, function
    from tensorplug._tracing._pipeline import generate_replay
    from tensorplug.train._checkpoint import Checkpoint, CheckpointError, load, restore, save


def __getattr__(name: str) -> Any:
    """Import a lazily loaded attribute (see ``_LAZY``) the first time it is asked for."""
    import importlib

    if name not in _LAZY:
        raise AttributeError(f"module 'tensorplug' has no attribute {name!r}")
    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names and those loaded on first use (``_LAZY``), for tab completion and ``help(tensorplug)``;
    listing them imports nothing."""
    return sorted(globals().keys() | _LAZY.keys())


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
    "PLUGIN_CONTRACT",
    "Assign",
    "Constant",
    "Backend",
    "BackendError",
    "BackendSpec",
    "Checkpoint",
    "CheckpointError",
    "CopyError",
    "Coverage",
    "CoverageRow",
    "DType",
    "DTypeError",
    "ExportError",
    "ExportRequest",
    "DecompositionSpec",
    "ExporterSpec",
    "FallbackWarning",
    "Function",
    "FunctionWarning",
    "GradientError",
    "GradientSet",
    "GradientSpec",
    "IndexingError",
    "InvalidArgumentError",
    "KernelError",
    "KernelProfile",
    "KernelSummary",
    "KernelNotFoundError",
    "KernelSpec",
    "NoBackendError",
    "NonFiniteError",
    "PluginError",
    "PluginInfo",
    "PluginWarning",
    "HostInput",
    "Program",
    "Replay",
    "Profile",
    "Step",
    "StepLowering",
    "RegistrationError",
    "ShapeError",
    "Tensor",
    "TensorSpec",
    "TensorplugError",
    "Timing",
    "TranslationSpec",
    "UnsupportedOperationError",
    "Variable",
    "VariableGrads",
    "backend",
    "bool_",
    "coverage",
    "custom_grad",
    "datasets",
    "debug",
    "export",
    "decomposition_stack",
    "decompositions",
    "exporters",
    "float32",
    "float64",
    "function",
    "generate_replay",
    "get_backend",
    "get_gradient",
    "get_kernel",
    "grad",
    "gradient_overrides",
    "gradient_sets",
    "gradient_stack",
    "grads",
    "hookimpl",
    "initializers",
    "int32",
    "int64",
    "kernel_names",
    "kernel_stack",
    "kernels_for_backend",
    "list_backends",
    "load",
    "losses",
    "memory",
    "no_grad",
    "ops",
    "persist",
    "plugins",
    "profile",
    "register_backend",
    "register_decomposition",
    "register_exporter",
    "register_gradient",
    "register_gradient_set",
    "register_kernel",
    "register_translation",
    "remove_backend",
    "restore",
    "run_kernel",
    "save",
    "set_backend",
    "stop_gradient",
    "testing",
    "train",
    "translation_stack",
    "translations",
    "unregister_exporter",
    "unregister_gradient",
    "unregister_decomposition",
    "unregister_gradient_set",
    "use_gradients",
    "unregister_kernel",
    "unregister_translation",
    "value_and_grad",
    "value_and_grads",
    "variable",
    "variable_grads",
]
__all__ += ops.__all__
# tp.time is public but stays out of __all__: `from tensorplug import *` must not shadow the time module.

from tensorplug._plugins._env import _truthy  # noqa: E402
from tensorplug._plugins._loading import load_plugins as _load_plugins  # noqa: E402


def _builtin_gradients() -> ModuleType:
    """The core's gradients, the built-in plugin: imported when they are first needed (the loader defers them)."""
    from tensorplug import gradients

    return gradients


_load_plugins(_builtin_gradients, __version__)

if _truthy("TENSORPLUG_DEBUG"):  # debug mode for the whole process: every thread's kernels are checked
    from tensorplug._inspection._debug import enable_everywhere as _enable_debug

    _enable_debug()
