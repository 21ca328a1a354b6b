"""Shape, indexing, dtype and creation kernels."""

from __future__ import annotations

from typing import Any

import numpy as np


def select(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.where(inputs["condition"], inputs["t"], inputs["e"])


def reshape(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.reshape(inputs["x"], attrs["shape"])


def transpose(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.transpose(inputs["x"], attrs["perm"])


def broadcast_to(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.broadcast_to(inputs["x"], attrs["shape"])


def cast(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    with np.errstate(all="ignore"):
        return inputs["x"].astype(attrs["dtype"])


def identity(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"]  # storage is immutable, so sharing it is safe


def fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.full(attrs["shape"], attrs["value"], dtype=attrs["dtype"])
