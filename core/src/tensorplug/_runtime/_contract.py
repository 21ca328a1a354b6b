"""The backend contract's removed methods: what a backend written for an earlier contract may still define.

A method the core no longer calls is not an error Python can see: the backend keeps it, the core ignores it, and
what it did is silently lost (a compiler that no ``tp.function`` uses any more). Each removed method is listed
here, with the version that removed it and what replaced it; ``tp.function`` warns about one it finds, and the
conformance suite (``tensorplug.testing.check_contract``, run by ``pytest --tensorplug-backend`` and
``tensorplug check``) fails on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["REMOVED_METHODS", "RemovedMethod", "removed_methods"]


@dataclass(frozen=True)
class RemovedMethod:
    """A method the backend contract no longer has: its ``name`` and ``signature``, the ``version`` that removed it,
    and the ``migration``: what replaced it and how to move to it."""

    name: str
    signature: str
    version: str
    migration: str

    def message(self, backend: str) -> str:
        """What a backend named ``backend`` that still defines the method is told."""
        return (
            f"backend {backend!r} defines {self.signature}, which the backend contract no longer has (removed in "
            f"tensorplug {self.version}), so the core never calls it: {self.migration}"
        )


REMOVED_METHODS: tuple[RemovedMethod, ...] = (
    RemovedMethod(
        "lower",
        "lower(program)",
        "0.1.0",
        "rename it compile(program) and adapt it to the replay's calling convention, replay(arguments, variables, "
        "host) -> (outputs, updates), which takes the Variables' storage in and gives their new storage out; or "
        "lower step by step with lower_step(program, index), and wrap the generated replay with "
        "wrap_replay(replay) if your library needs it (see docs/authoring.md, 'Lowering a traced program'); then "
        "delete lower",
    ),
)
"""Every method removed from ``tensorplug.Backend``'s contract, oldest first."""


def removed_methods(backend: Any) -> list[RemovedMethod]:
    """The removed methods that ``backend`` (an instance or a class) still defines."""
    return [removed for removed in REMOVED_METHODS if getattr(backend, removed.name, None) is not None]
