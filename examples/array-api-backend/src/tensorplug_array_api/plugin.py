"""The plugin module named by the ``tensorplug`` entry point: the backend declaration and its kernel table.

Nothing here imports the array library: the factory and every kernel are
named lazily (``"module:function"``), so ``import tensorplug`` stays cheap;
the namespace is imported when the backend is first initialised. The kernel
table follows the catalogue's convention (``Sqrt`` is ``_unary:sqrt``, see
``tensorplug.kernel_factories.catalogue_kernels``), less FALLBACK_KERNELS.
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug import kernel_names as K
from tensorplug.kernel_factories import catalogue_kernels

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for

BACKEND = "array_api"
# Below numpy (1) and torch (0 on the CPU): installing this plugin never changes the default backend.
PRIORITY = -10
# The kernels in FALLBACK_KERNELS run on this backend.
FALLBACK = "numpy"
_PACKAGE = "tensorplug_array_api"

# Left to FALLBACK, because the array API standard has no function to build them from cleanly: Erf (no special
# functions), Einsum, ScatterNd and UnsortedSegmentSum (no scatter-add), the convolutions and pooling kernels (no
# sliding windows), RandomUniform and RandomNormal (no random numbers).
FALLBACK_KERNELS: tuple[str, ...] = (
    K.ERF, K.EINSUM, K.SCATTER_ND, K.UNSORTED_SEGMENT_SUM, K.CONV2D, K.CONV2D_BACKPROP_INPUT,
    K.CONV2D_BACKPROP_FILTER, K.MAX_POOL, K.MAX_POOL_GRAD, K.AVG_POOL, K.AVG_POOL_GRAD, K.RANDOM_UNIFORM,
    K.RANDOM_NORMAL,
)  # fmt: skip


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, f"{_PACKAGE}._backend:ArrayAPIBackend", priority=PRIORITY, fallback=FALLBACK)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return catalogue_kernels(BACKEND, _PACKAGE, skip=FALLBACK_KERNELS)
