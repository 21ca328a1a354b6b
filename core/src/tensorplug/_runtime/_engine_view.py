"""What the runtime modules below the engine read of it, without importing it.

``_observe`` (whether observers are on), ``_tensor`` (how a tensor prints: the active backend) and ``_storage``
(messages naming the registered backends) sit below the engine, which imports them. The engine puts its
answers into ``view`` when it is made (``tensorplug._runtime._engine._backends``); until then, ``view`` says
that no backend is active or registered and ignores observers.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["EngineView", "view"]


class EngineView:
    """The engine as the modules below it see it: three functions the engine replaces with its own."""

    __slots__ = ("active_name", "names", "observe")

    def __init__(self) -> None:
        self.active_name: Callable[[], str | None] = lambda: None
        """The active backend's name (None: none is active yet)."""
        self.names: Callable[[], list[str]] = list
        """The names of the registered backends."""
        self.observe: Callable[[int], None] = lambda change: None
        """``observe(+1)`` when an observer comes, ``observe(-1)`` when it goes (the engine then wraps the kernels
        of its dispatch tables while any observer is on)."""


view = EngineView()
