"""The exception hierarchy: every error tensorplug raises derives from TensorplugError.

Each class also subclasses the builtin a caller would expect (ValueError,
TypeError, LookupError, RuntimeError, FloatingPointError), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

import warnings


class TensorplugError(Exception):
    """Base class of every error raised by tensorplug."""


class BackendError(TensorplugError, RuntimeError):
    """A backend is missing, failed to initialise, or cannot do what was asked."""


class NoBackendError(BackendError):
    """No backend is installed or none could be initialised."""


class KernelNotFoundError(TensorplugError, LookupError):
    """No kernel is registered for (kernel name, active backend)."""


class KernelError(TensorplugError, RuntimeError):
    """A kernel raised; the message names the kernel, backend, shapes and dtypes."""


class RegistrationError(TensorplugError, ValueError):
    """A kernel, gradient or backend registration was refused."""


class GradientError(TensorplugError, ValueError):
    """A gradient could not be computed, or a gradient function broke its contract."""


class ShapeError(TensorplugError, ValueError):
    """Arguments of an op have incompatible shapes."""


class InvalidArgumentError(TensorplugError, ValueError):
    """An argument of an op has a value the op cannot take: an unknown mode, a negative rate, a missing step."""


class DTypeError(TensorplugError, TypeError):
    """Arguments of an op have unsupported or incompatible dtypes."""


class IndexingError(TensorplugError, IndexError):
    """A tensor index is out of range, or of a kind tensor indexing does not support."""


class UnsupportedOperationError(TensorplugError, TypeError):
    """A tensor was asked for what it does not support: item assignment (tensors are immutable), say."""


class ExportError(TensorplugError, ValueError):
    """A function could not be exported: an unknown format, or a kernel, dtype or kind of program (gradients,
    random draws, Variable updates) the format cannot express; the message names the step and what to do."""


class CopyError(TensorplugError, ValueError):
    """A copy was needed where the caller forbade one (``np.asarray(t, copy=False)`` of device memory, say)."""


class NonFiniteError(TensorplugError, FloatingPointError):
    """Debug mode (``tp.debug()``, ``TENSORPLUG_DEBUG=1``) found NaN or inf in a kernel's output or a gradient.

    The message names the kernel, backend, inputs and phase (forward, or the
    gradient of which kernel); the attributes give the same for programs.
    """

    def __init__(
        self,
        message: str,
        kernel: str = "",
        backend: str = "",
        gradient_of: str | None = None,
        nan: int = 0,
        inf: int = 0,
    ) -> None:
        super().__init__(message)
        self.kernel = kernel  # the kernel whose output held them (or, for a gradient no kernel made, its kernel)
        self.backend = backend
        self.gradient_of = gradient_of  # None in the forward pass
        self.nan = nan  # how many NaN elements
        self.inf = inf  # how many +-inf elements


class PluginError(TensorplugError, RuntimeError):
    """A plugin failed to load (raised in strict mode; a warning otherwise)."""


class PluginWarning(UserWarning):
    """A plugin failed to load, two plugins registered the same key, or an entry of another distribution was
    shadowed or removed (at load time, or at run time by any code: ``tensorplug info`` lists them all)."""


class FallbackWarning(UserWarning):
    """A kernel the active backend lacks ran on its fallback backend (said once per kernel and backend).

    Silence it with ``warnings.filterwarnings("ignore", category=tp.FallbackWarning)``, or
    register the kernel for the backend.
    """


class FunctionWarning(UserWarning):
    """A ``tp.function`` runs eagerly for a signature (its trace read a value back to Python, say), or retraces
    too often. Said once per signature (retracing: once per function); the message says why and what to do.
    """


def warn(message: str, category: type[Warning] = PluginWarning, stacklevel: int = 3) -> None:
    """Issue a tensorplug warning (one place, so tests can filter on it)."""
    warnings.warn(message, category, stacklevel=stacklevel)


# Public as tp.<name>: tracebacks, reprs and pickles name them so (tensorplug.ShapeError), wherever they are defined.
for _public in (
    TensorplugError,
    BackendError,
    NoBackendError,
    KernelNotFoundError,
    KernelError,
    RegistrationError,
    GradientError,
    ShapeError,
    InvalidArgumentError,
    DTypeError,
    IndexingError,
    UnsupportedOperationError,
    CopyError,
    ExportError,
    NonFiniteError,
    PluginError,
    PluginWarning,
    FallbackWarning,
    FunctionWarning,
):
    _public.__module__ = "tensorplug"
del _public
