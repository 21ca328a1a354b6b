"""A partial test backend, "box": numpy arrays in a box (so its storage is visibly not numpy's), a few kernels of its
own, and counters of what crossed its edge. tests/unit/test_fallback.py and tests/unit/test_profile.py use it."""

from __future__ import annotations

from typing import Any

import numpy as np

import tensorplug as tp


class Boxed:
    """The box backend's storage: a numpy array in a box."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.shape = array.shape
        self.nbytes = array.nbytes


class BoxBackend(tp.Backend):
    """``moved_in`` counts the arrays moved in from another backend, ``synchronized`` the synchronisations."""

    def __init__(self) -> None:
        self.moved_in = 0
        self.synchronized = 0

    def from_host(self, array: np.ndarray) -> Any:
        return Boxed(array)

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw.array)

    def dtype_of(self, raw: Any) -> str:
        return str(raw.array.dtype.name)

    def move_from(self, raw: Any, source: tp.Backend) -> Any:
        self.moved_in += 1
        return super().move_from(raw, source)

    def synchronize(self) -> None:
        self.synchronized += 1


def box_add(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    with np.errstate(all="ignore"):  # inf - inf is NaN, as the contract says
        return Boxed(np.add(inputs["a"].array, inputs["b"].array))


def box_multiply(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    with np.errstate(all="ignore"):
        return Boxed(np.multiply(inputs["a"].array, inputs["b"].array))


def box_neg(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return Boxed(np.negative(inputs["x"].array))
