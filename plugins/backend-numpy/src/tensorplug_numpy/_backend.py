"""The numpy backend object: raw storage is numpy.ndarray (or a numpy scalar from a 0-d result)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug import Backend

if TYPE_CHECKING:
    from tensorplug import Constant, Program, Replay, StepLowering

# numpy's dtype.name is a slow Python property; a dict keyed by dtype is a fast lookup.
_NAMES = {np.dtype(name): name for name in ("float32", "float64", "int32", "int64", "bool")}


class NumpyBackend(Backend):
    """Tensors as numpy arrays on the CPU."""

    name = "numpy"
    device = "cpu"

    def from_host(self, array: np.ndarray) -> Any:
        return array  # the core hands over a fresh array that nobody else holds

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw)

    def fused_update(self, name: str) -> Any:
        """The optimizers' fused update ``name`` (``ApplyAdam``...: see ``tensorplug.train``), or None."""
        from tensorplug_numpy._train import FUSED_UPDATES

        return FUSED_UPDATES.get(name)

    def dtype_of(self, raw: Any) -> str:
        dtype = raw.dtype
        name = _NAMES.get(dtype)
        return name if name is not None else str(dtype.name)

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        return tuple(raw.shape)

    def alias(self, raw: Any) -> Any:
        return raw.view() if type(raw) is np.ndarray else np.array(raw)  # a view; a numpy scalar as a 0-d copy

    def from_dlpack(self, obj: Any) -> Any:
        return np.from_dlpack(obj)  # zero-copy for CPU producers; shares their memory

    def move_from(self, raw: Any, source: Backend) -> Any:
        try:
            return np.from_dlpack(source.dlpack_source(raw))  # zero-copy from CPU storage (torch on the CPU, say)
        except (TypeError, RuntimeError, BufferError, AttributeError):
            return np.asarray(source.to_host(raw))  # device memory: a copy

    def dlpack_source(self, raw: Any) -> Any:
        return np.asarray(raw)  # a 0-d result may be a numpy scalar, which has no __dlpack__

    def nbytes(self, raw: Any) -> int:
        return int(raw.nbytes)

    def all_finite(self, raw: Any) -> bool:
        kind = raw.dtype.kind
        if kind not in "fc":
            return True  # integers and bools hold no NaN or inf
        if kind == "f" and raw.size <= 16:  # a ufunc and a reduction cost ~2 us; Python's math, 0.3 us for a few
            return all(map(math.isfinite, raw.flat))
        return bool(np.isfinite(raw).all())

    def lower_step(self, program: Program, index: int) -> StepLowering | Constant | None:
        from tensorplug_numpy._lower import lower_step  # imported at the first trace, not with the backend

        return lower_step(program, index)

    def fuse(self, program: Program, chain: tuple[int, ...]) -> StepLowering | None:
        from tensorplug_numpy._fuse import fuse

        return fuse(program, chain)

    def wrap_replay(self, replay: Replay) -> Replay:
        from tensorplug_numpy._lower import wrap_replay

        return wrap_replay(replay)
