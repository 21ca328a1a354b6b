"""What a tensor holds: storage moved between backends with its dtype checked, the errors of a dtype a
backend cannot store, a read-only host view for DLPack, and what a disposed tensor holds. Tensor and
Variable (:mod:`tensorplug._runtime._tensor`) are built on these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug._runtime._engine_view import view
from tensorplug._runtime._errors import DTypeError, TensorplugError
from tensorplug._runtime._state import state

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend
    from tensorplug._runtime._tensor import Tensor


def is_host_device(device: str) -> bool:
    """Whether a backend's device name means host memory ("cpu", "CPU:0")."""
    return device.lower().startswith("cpu")


def spec_text(dtype: str, shape: Sequence[int]) -> str:
    """A dtype and a shape as messages and tables write them: ``float32[2, 3]``."""
    return f"{dtype}[{', '.join(str(d) for d in shape)}]"


def _read_only_host_view(source: Any) -> Any:
    """A read-only numpy view of a DLPack producer in host memory; a producer elsewhere as it is."""
    if type(source) is not np.ndarray:
        try:
            if int(source.__dlpack_device__()[0]) != 1:  # kDLCPU
                return source
            source = np.from_dlpack(source)
        except Exception:  # a dtype numpy lacks, say: exported as it is
            return source
    if source.flags.writeable:
        source = source.view()
        source.flags.writeable = False
    return source


# -- what a backend stores: the dtype a tensor reports is the dtype its storage holds ----------------


def moved_storage(t: Tensor, target: Backend, op: str) -> Any:
    """``t``'s storage moved to backend ``target``, refused if ``target`` cannot hold ``t``'s dtype."""
    dtype = t.dtype
    unsupported = target.unsupported_dtypes
    if unsupported and dtype in unsupported:
        raise unsupported_dtype_error(op, target, dtype, t.shape)
    tracer = state.tracer
    if tracer is not None:  # tp.function is tracing: a move is no kernel call, so a replay could not redo it
        tracer.read_back(t, f"it was moved from backend {t._backend.name!r} to {target.name!r} ({op})")
    raw = target.move_from(t._data, t._backend)
    stored = target.dtype_of(raw)
    if stored != dtype:
        raise stored_dtype_error(op, target, dtype, stored, t.shape)
    return raw


def unsupported_dtype_error(op: str, backend: Backend, dtype: str, shape: Sequence[int]) -> DTypeError:
    """The error for a tensor of a dtype that ``backend`` declares it cannot store (``Backend.unsupported_dtypes``)."""
    narrower = {"float64": "float32", "int64": "int32"}.get(dtype)
    instead = (
        "" if narrower is None else f"make the data {narrower} (dtype={narrower!r}, or tp.cast(x, {narrower!r})), or "
    )
    return DTypeError(
        f"{op}: backend {backend.name!r} cannot store {dtype} (it declares unsupported_dtypes="
        f"{sorted(backend.unsupported_dtypes)}), so it cannot hold {spec_text(dtype, shape)}; "
        f"{instead}switch to a backend that has {dtype}{_other_backends(backend)}"
    )


def stored_dtype_error(op: str, backend: Backend, dtype: str, stored: str, shape: Sequence[int]) -> DTypeError:
    """The error for storage that ``backend`` made of another dtype than asked (float64 kept as float32, say)."""
    return DTypeError(
        f"{op}: backend {backend.name!r} stored {spec_text(dtype, shape)} as {stored}, which would change the values "
        f"silently, so the tensor was not made. Make the data {stored} first if that is what you want "
        f"(dtype={stored!r}), or switch to a backend that has {dtype}{_other_backends(backend)}. "
        "(A backend that cannot store a dtype should declare it in Backend.unsupported_dtypes.)"
    )


def _other_backends(backend: Backend) -> str:
    others = [name for name in view.names() if name != backend.name]
    return f" (registered: {', '.join(others)}; tp.set_backend(name))" if others else ""


class _DisposedStorage:
    """What a disposed tensor holds: any use says so."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # introspection (doctest, copy, pickle) asks for dunders: plain "absent"
            raise AttributeError(name)
        raise TensorplugError("this tensor was disposed (Tensor.dispose()); it can no longer be used")


class _DisposedBackend:
    """The backend of a disposed tensor: never the active one, so run_kernel takes its checked path."""

    name = "<disposed>"
    device = "<disposed>"

    def dtype_of(self, raw: Any) -> str:
        return raw.dtype  # type: ignore[no-any-return]  # raises: raw is _DisposedStorage

    def move_from(self, raw: Any, source: Any) -> Any:
        return raw.data

    def to_host(self, raw: Any) -> Any:
        return raw.data

    def dlpack_source(self, raw: Any) -> Any:
        return raw.data


_DISPOSED_STORAGE: Any = _DisposedStorage()
_DISPOSED_BACKEND: Any = _DisposedBackend()
