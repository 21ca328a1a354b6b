"""Elementwise unary kernels: the numpy backend's kernel mapped over each chunk (see ``_factories.chunkwise``).

There is one for every unary kernel of the catalogue (``kernel_names.UNARY``), made here from that list, so a
kernel that joins the catalogue (and tensorplug-numpy) needs no line in this backend. The plugin names each by
convention (``Sqrt`` is ``tensorplug_dask._unary:sqrt``, see ``catalogue_kernels``); this module's
``__getattr__`` hands it out from ``KERNELS``.
"""

from __future__ import annotations

from tensorplug import kernel_names as K
from tensorplug.kernel_factories import Kernel, kernel_function_name
from tensorplug_dask._factories import unary

KERNELS: dict[str, Kernel] = {kernel_function_name(name): unary(name) for name in K.UNARY}
"""Each unary kernel by the function name the catalogue's convention gives it (``abs_``, ``sqrt``...)."""


def __getattr__(name: str) -> Kernel:
    kernel = KERNELS.get(name)
    if kernel is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return kernel
