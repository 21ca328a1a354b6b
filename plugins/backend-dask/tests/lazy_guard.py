"""A scheduler that refuses to compute: the check that dask kernels, ops and gradients only add tasks to graphs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import dask


class ComputedError(BaseException):
    """Raised by the guard scheduler (a BaseException: the dask backend's KernelError wrapping leaves it alone)."""


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise ComputedError("a dask graph computed a value where nothing may be computed: kernels must only add tasks")


@contextmanager
def no_compute() -> Iterator[None]:
    """Any compute or persist of a dask graph in the block raises ComputedError."""
    with dask.config.set(scheduler=_refuse):
        yield
