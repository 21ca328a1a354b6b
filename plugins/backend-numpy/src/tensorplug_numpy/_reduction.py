"""Reduction kernels (input ``x``; ``axis`` is a sorted tuple of non-negative axes)."""

from __future__ import annotations

from typing import Any

import numpy as np


def sum_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    return np.sum(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)


def mean(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    x = inputs["x"]
    count = 1
    for a in attrs["axis"]:
        count *= x.shape[a]
    total = np.sum(x, axis=attrs["axis"], keepdims=attrs["keep_dims"], dtype=x.dtype)
    with np.errstate(all="ignore"):
        return np.divide(total, count, dtype=x.dtype)  # NaN over zero elements, without a warning


def max_(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.max(inputs["x"], axis=attrs["axis"], keepdims=attrs["keep_dims"])
