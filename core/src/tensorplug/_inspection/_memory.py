"""Memory accounting: live tensors and their bytes per backend, counted on demand (no cost per op)."""

from __future__ import annotations

import gc
from typing import Any

from tensorplug._runtime._engine import engine
from tensorplug._runtime._tensor import Tensor


def memory() -> dict[str, dict[str, Any]]:
    """Live tensors and bytes per initialised backend (storage shared by several tensors counted once).

    Each entry also has the backend's device and whatever its allocator
    reports (a torch backend on CUDA adds the device's allocated bytes).

    >>> import tensorplug as tp
    >>> x = tp.zeros((1000,))
    >>> tp.memory()["numpy"]["bytes"] >= 4000
    True
    """
    report: dict[str, dict[str, Any]] = {}
    for name, backend in list(engine.instances.items()):
        report[name] = {"tensors": 0, "bytes": 0, "device": backend.device, **backend.memory()}
    seen: set[int] = set()
    for obj in gc.get_objects():
        # type(), not isinstance: isinstance reads obj.__class__, which some objects answer with a warning
        if not issubclass(type(obj), Tensor) or obj.is_disposed:
            continue
        entry = report.get(obj._backend.name)
        if entry is None:
            continue
        entry["tensors"] += 1
        if id(obj._data) not in seen:
            seen.add(id(obj._data))
            entry["bytes"] += obj._backend.nbytes(obj._data)
    return report
