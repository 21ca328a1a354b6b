"""How a tensor prints: NumPy's ``array_repr`` layout, with the backend and device where they matter."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from tensorplug._runtime._storage import is_host_device

if TYPE_CHECKING:
    from tensorplug._runtime._tensor import Tensor


def _no_engine() -> str | None:
    return None


_active_backend: Callable[[], str | None] = _no_engine
"""The active backend's name (None: none is active yet); the engine plugs it in when it is made."""


def active_backend_from(name: Callable[[], str | None]) -> None:
    """Let ``name()`` tell the printing which backend is active (the engine's, given when the engine is made)."""
    global _active_backend
    _active_backend = name


def _repr(t: Tensor, name: str, extra: list[str]) -> str:
    """NumPy's ``array_repr`` layout, as ``name(values, dtype=..., <placement>, <extra>)``."""
    if t.is_disposed:
        return f"<disposed {name}>"
    array = t.numpy()
    prefix = f"{name}("
    if array.size or array.shape == (0,):
        body = np.array2string(array, separator=", ", prefix=prefix, suffix=",")
    else:
        body = f"[], shape={array.shape}"  # as NumPy: the shape of an empty array would be lost otherwise
    text = f"{prefix}{body},"
    tail = ", ".join([f"dtype={t.dtype}", *_placement(t), *extra]) + ")"
    last_line = len(text) - (text.rfind("\n") + 1)
    if last_line + 1 + len(tail) > np.get_printoptions()["linewidth"]:
        return f"{text}\n{' ' * len(prefix)}{tail}"
    return f"{text} {tail}"


def _placement(t: Tensor) -> list[str]:
    """The backend when it is not the active one, and the device when it is not the host."""
    fields = []
    active = _active_backend()
    if active is None or active != t.backend:
        fields.append(f"backend={t.backend!r}")
    if not is_host_device(t.device):
        fields.append(f"device={t.device!r}")
    return fields
