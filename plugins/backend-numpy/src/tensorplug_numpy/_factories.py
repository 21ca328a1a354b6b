"""Kernel factories for the numpy kernel modules: the generic ones from the core, plus ``quiet``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tensorplug.kernel_factories import Kernel as Kernel
from tensorplug.kernel_factories import binary as binary
from tensorplug.kernel_factories import unary as unary


def quiet(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run ``fn`` with numpy's floating-point warnings off: inf and NaN results are the contract."""

    def quiet_fn(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args)

    quiet_fn.__name__ = getattr(fn, "__name__", "quiet")
    return quiet_fn
