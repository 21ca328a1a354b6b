"""Elementwise binary kernels (inputs ``a``, ``b``, broadcasting): numpy's kernel mapped over each chunk.

Those with inputs ``a`` and ``b`` are made from the catalogue's list (``kernel_names.BINARY``), as the unary
kernels are (see ``_unary``), so a new one needs no line here; ``prelu`` and ``add_n`` are written out.
"""

from __future__ import annotations

from functools import reduce
from typing import Any

import dask.array as da

from tensorplug import kernel_names as K
from tensorplug.kernel_factories import Kernel, kernel_function_name
from tensorplug_dask._factories import binary, chunkwise

KERNELS: dict[str, Kernel] = {
    kernel_function_name(name): binary(name) for name in K.BINARY if name not in (K.PRELU, K.ADD_N)
}
"""Each binary kernel of inputs ``a``, ``b`` by the function name the catalogue's convention gives it."""

prelu = chunkwise("Prelu", ("x", "alpha"))


def add_n(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """A sum of same-shape, same-dtype tensors: one elementwise task per chunk after blockwise fusion."""
    return reduce(da.add, inputs["tensors"])


def __getattr__(name: str) -> Kernel:
    kernel = KERNELS.get(name)
    if kernel is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return kernel
