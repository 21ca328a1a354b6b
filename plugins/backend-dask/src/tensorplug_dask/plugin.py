"""The plugin module named by the ``tensorplug`` entry point: the backend declaration and its kernel table.

Nothing here imports dask: the factory and every kernel are named lazily
(``"module:function"``), so ``import tensorplug`` stays cheap; dask is
imported when the backend is first initialised. The kernel table follows the
catalogue's convention (``Sqrt`` is ``_unary:sqrt``). Kernels that map the
numpy backend's kernel over each chunk (``PER_CHUNK``) carry the note
``"per-chunk"``, which ``tp.coverage()`` and ``tensorplug info`` show.
"""

from __future__ import annotations

import dataclasses

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug import kernel_names as K
from tensorplug.kernel_factories import catalogue_kernels

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for

BACKEND = "dask"
# Below numpy (1) and torch (0 on the CPU): installing this plugin never changes the default backend.
PRIORITY = -5
# A kernel this backend does not register runs on numpy through the fallback mechanism (computing its inputs).
FALLBACK = "numpy"
PER_CHUNK_NOTE = "per-chunk"
_PACKAGE = "tensorplug_dask"

# Kernels written as numpy's kernel mapped over each chunk (tensorplug_dask._factories.per_chunk): every elementwise
# kernel, and those dask.array has no faithful function for, after rechunking only the axes they need whole.
PER_CHUNK: frozenset[str] = frozenset(
    [
        *K.FAMILIES["unary"],
        *(k for k in K.FAMILIES["binary"] if k != K.ADD_N),
        K.CAST, K.GATHER_ND, K.SCATTER_ND, K.UNSORTED_SEGMENT_SUM, K.TOP_K,
        K.CONV2D, K.CONV2D_BACKPROP_INPUT, K.CONV2D_BACKPROP_FILTER,
        K.MAX_POOL, K.MAX_POOL_GRAD, K.AVG_POOL, K.AVG_POOL_GRAD,
    ]
)  # fmt: skip


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, f"{_PACKAGE}._backend:DaskBackend", priority=PRIORITY, fallback=FALLBACK)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return [
        dataclasses.replace(spec, note=PER_CHUNK_NOTE) if spec.kernel_name in PER_CHUNK else spec
        for spec in catalogue_kernels(BACKEND, _PACKAGE)
    ]
