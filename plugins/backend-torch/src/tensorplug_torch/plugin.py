"""The plugin module named by the ``tensorplug`` entry point: the backend and its kernel table.

Nothing here imports torch: the factory, the priority and every kernel are
named lazily (``module:attr``), so `import tensorplug` and listing kernels or
backends stay cheap; torch is imported when the backend is first initialised.
Every catalogue kernel lives in its family's module under the conventional
name (``Sqrt`` is ``_unary:sqrt``; see ``tensorplug.kernel_factories.catalogue_kernels``).
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug.kernel_factories import catalogue_kernels

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for

BACKEND = "torch"
_PACKAGE = "tensorplug_torch"


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, f"{_PACKAGE}._backend:TorchBackend", priority=f"{_PACKAGE}._probe:priority")]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return catalogue_kernels(BACKEND, _PACKAGE)
