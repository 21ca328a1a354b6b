"""Which version of the plugin contract a plugin was written for, and what the loader does about it.

The plugin contract (the hookspecs, ``tensorplug.Backend``'s methods and attributes, the spec types, the lowering
contract) has a version, ``major.minor`` (:data:`tensorplug.hookspecs.CONTRACT`): a minor release adds to it, a
major one changes or removes something a plugin may rely on. A plugin module says which version it was written for
with a module-level ``TENSORPLUG_CONTRACT = "1.1"``. At discovery:

- another major: the plugin is refused (rolled back, as any plugin that fails), with both versions and what to do;
- a newer minor: it loads, with one warning: what it uses of the newer versions is missing here;
- a feature of the contract it uses that is deprecated (:data:`DEPRECATED`): one warning per feature, with the
  version that deprecated it and the migration;
- no declaration: it loads as one written for the first contract (1.0), without a word, as plugins written before
  the contract had a version do.

``tensorplug info`` and ``tensorplug check`` show each plugin's declared version beside the core's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import ModuleType

from tensorplug.hookspecs import CONTRACT

__all__ = [
    "ATTRIBUTE",
    "DEPRECATED",
    "DECLARED_DEFAULTS",
    "Deprecation",
    "declared_contract",
    "parse",
    "written_for_defaults",
]

ATTRIBUTE = "TENSORPLUG_CONTRACT"
"""The module-level name under which a plugin module declares the contract version it was written for."""

_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)")


class Deprecation:
    """A feature of the contract that still works but will be removed: the ``version`` of the contract that
    deprecated it, how to tell a plugin ``uses`` it (given its module), and the ``migration``."""

    __slots__ = ("feature", "migration", "uses", "version")  # (a plain class: a dataclass costs ~0.5 ms at import)

    def __init__(self, feature: str, version: str, uses: Callable[[ModuleType], bool], migration: str) -> None:
        self.feature, self.version, self.uses, self.migration = feature, version, uses, migration


DEPRECATED: tuple[Deprecation, ...] = ()
"""Every deprecated feature of the contract, oldest first. Contract 1.1 deprecates none; a feature goes here, with
its migration, the release before a major version removes it."""


def parse(version: str) -> tuple[int, int]:
    """``"1.1"`` -> ``(1, 1)``; ValueError for anything else."""
    match = _VERSION.fullmatch(version) if isinstance(version, str) else None
    if match is None:
        raise ValueError(version)
    return int(match.group(1)), int(match.group(2))


DECLARED_DEFAULTS = "1.1"
"""The contract version from which a plugin's declarations take the defaults of declared specs (a gradient it
declares is replayed unless it says ``replay=False``); a plugin written for an older contract, or declaring none,
gets the runtime defaults (its gradients run as written), as it did then."""


def written_for_defaults(declared: str | None) -> bool:
    """Whether a plugin declaring contract ``declared`` (None: none) takes the defaults of declared specs."""
    return declared is not None and parse(declared) >= parse(DECLARED_DEFAULTS)


def declared_contract(module: ModuleType, who: str) -> tuple[str | None, list[str]]:
    """The contract version ``module`` declares (None: none), and the warnings it earns (a newer minor, each
    deprecated feature it uses). Raises ValueError, with the message the plugin fails with, for a malformed
    declaration or another major version. ``who`` names the plugin in the messages."""
    declared = getattr(module, ATTRIBUTE, None)
    core_major, core_minor = parse(CONTRACT)
    warnings: list[str] = []
    if declared is not None:
        try:
            major, minor = parse(declared)
        except ValueError:
            raise ValueError(
                f"{module.__name__}.{ATTRIBUTE} is {declared!r}; it is the version of tensorplug's plugin contract "
                f"the plugin was written for, a string 'major.minor' such as {CONTRACT!r}"
            ) from None
        if major != core_major:
            raise ValueError(
                f"it was written for tensorplug's plugin contract {declared}, and this tensorplug implements "
                f"contract {CONTRACT}: another major version is incompatible. Install a release of the plugin "
                f"written for contract {core_major}.x, or a release of tensorplug implementing contract {major}.x"
            )
        if minor > core_minor:
            warnings.append(
                f"tensorplug: {who} was written for tensorplug's plugin contract {declared}, newer than the "
                f"{CONTRACT} this tensorplug implements: what it uses of contract {core_major}.{core_minor + 1} and "
                f"later is missing here. Upgrade tensorplug to a release implementing contract {declared}."
            )
    for deprecation in DEPRECATED:
        if deprecation.uses(module):
            warnings.append(
                f"tensorplug: {who} uses {deprecation.feature}, deprecated in tensorplug's plugin contract "
                f"{deprecation.version} (this tensorplug implements {CONTRACT}): {deprecation.migration}"
            )
    return declared, warnings
