"""Undo what a test registers: the kernel, gradient and gradient set registries put back as they were.

Built on the registries' own snapshot and restore, the way a plugin that fails to load is rolled back: what was
added goes, what was removed comes back, in its place in its stack. Tests use it through the ``registries``
fixture (tests/conftest.py). A kernel's ``dispose`` hook is not called; a test of that hook unregisters by hand.
Backends are not covered (tests/unit's conftest puts those back).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def restored_registries() -> Iterator[None]:
    """Within the block, register and unregister at will; on leaving it, every registry is as it was."""
    from tensorplug._plugin_guard import REGISTRIES  # the registries a plugin's rollback restores; none is public

    saved = [(registry, registry.snapshot()) for registry in REGISTRIES]
    try:
        yield
    finally:
        for registry, before in saved:
            registry.restore(before)
