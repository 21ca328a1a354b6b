"""Undo what a test registers: the kernel, gradient and gradient set registries put back as they were.

Built on the registries' own snapshot and restore, the way a plugin that fails to load is rolled back: what was
added goes, what was removed comes back, in its place in its stack. Tests use it through the pytest fixture
``tensorplug_registries`` (the ``tensorplug`` pytest plugin, present wherever tensorplug is installed) or as a
context manager. A kernel's ``dispose`` hook is not called. Backends are not covered: remove a backend a test
registers with ``tp.remove_backend``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def restored_registries() -> Iterator[None]:
    """Within the block, register and unregister at will; on leaving it, every registry is as it was.

    >>> import tensorplug as tp
    >>> from tensorplug.testing import restored_registries
    >>> with restored_registries():
    ...     _ = tp.register_kernel("Twice", "numpy", lambda inputs, attrs, backend: inputs["x"] * 2)
    >>> tp.get_kernel("Twice", "numpy") is None
    True
    """
    from tensorplug._runtime._registry import (
        REGISTRIES,  # every registry table (a failed plugin's rollback restores them)
    )

    saved = [(registry, registry.snapshot()) for registry in REGISTRIES]
    try:
        yield
    finally:
        for registry, before in saved:
            registry.restore(before)
