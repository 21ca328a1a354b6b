"""The plugin module named by the ``tensorplug`` entry point: the backend declaration and its kernel table.

Nothing here imports dask: the factory and every kernel are named lazily
(``"module:function"``), so ``import tensorplug`` stays cheap; dask is
imported when the backend is first initialised. The kernel table follows the
catalogue's convention (``Sqrt`` is ``_unary:sqrt``).
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug.kernel_factories import catalogue_kernels

BACKEND = "dask"
# Below numpy (1) and torch (0 on the CPU): installing this plugin never changes the default backend.
PRIORITY = -5
# A kernel this backend does not register runs on numpy through the fallback mechanism (computing its inputs).
FALLBACK = "numpy"
_PACKAGE = "tensorplug_dask"


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, f"{_PACKAGE}._backend:DaskBackend", priority=PRIORITY, fallback=FALLBACK)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return catalogue_kernels(BACKEND, _PACKAGE)
