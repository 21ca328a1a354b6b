"""The plugin module named by the ``tensorplug`` entry point: the backend and its kernel table.

Kernels are named lazily (``module:function``), so discovery imports
nothing beyond this module. Every catalogue kernel lives in its family's
module under the conventional name (``Sqrt`` is ``_unary:sqrt``, ``Sum`` is
``_reduction:sum_``; see ``tensorplug.kernel_factories.catalogue_kernels``).
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug.kernel_factories import catalogue_kernels

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for

BACKEND = "numpy"
PRIORITY = 1
_PACKAGE = "tensorplug_numpy"


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, "tensorplug_numpy._backend:NumpyBackend", priority=PRIORITY)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return catalogue_kernels(BACKEND, _PACKAGE)
