"""The backend contract check of the conformance suite: a backend still defining a method removed from the
contract fails it, told what replaced the method."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend

__all__ = ["check_contract", "contract_line"]


def check_contract(backend: Backend | None = None) -> None:
    """Raise AssertionError if ``backend`` (the active one by default) still defines a method removed from the
    backend contract, which the core would never call: the message names each, the version that removed it,
    and what replaced it.

    >>> import tensorplug as tp
    >>> class Old(tp.Backend):
    ...     name = "old"
    ...     def lower(self, program): return None
    >>> try:
    ...     check_contract(Old())
    ... except AssertionError as exc:
    ...     print(str(exc).partition(", so")[0])
    backend 'old' defines lower(program), which the backend contract no longer has (removed in tensorplug 0.1.0)
    """
    import tensorplug as tp
    from tensorplug._runtime._contract import removed_methods

    backend = tp.backend() if backend is None else backend
    problems = [removed.message(backend.name) for removed in removed_methods(backend)]
    if problems:
        raise AssertionError("; and ".join(problems))


def contract_line(backend: str) -> str:
    """The line of a conformance run's summary that says which plugin contract ``backend``'s distribution declares
    it was written for, beside the one this tensorplug implements."""
    import tensorplug as tp
    from tensorplug.hookspecs import CONTRACT

    owners = [p for p in tp.plugins() if backend in p.backends]
    said = "; ".join(f"{p.distribution} declares {p.contract or 'none'}" for p in owners) or "no plugin registers it"
    return f"  plugin contract: {said} (this tensorplug implements {CONTRACT})"
