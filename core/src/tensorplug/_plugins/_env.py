"""What the environment says about plugins, read before any plugin module is imported, and an allowlist that names
nothing installed. See ``tensorplug._plugins._loading``.

- ``TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD=1``: load no plugin.
- ``TENSORPLUG_PLUGINS=a,b``: load only these (entry-point or distribution names); set but empty, it allows none.
- ``TENSORPLUG_STRICT_PLUGINS=1``: a plugin that fails to load, or an allowlisted name that matches no installed
  plugin, raises PluginError.
"""

from __future__ import annotations

import os

from tensorplug._plugins._entry_points import EntryPoint, normalize
from tensorplug._runtime._errors import PluginError, warn
from tensorplug._runtime._registry import BUILTIN

ENV_DISABLE = "TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD"
ENV_ALLOW = "TENSORPLUG_PLUGINS"
ENV_STRICT = "TENSORPLUG_STRICT_PLUGINS"


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


class Settings:
    """The three environment variables, read once, before any plugin module is imported (a plain class: a
    NamedTuple costs ~0.3 ms of import time, a frozen dataclass ~1 ms)."""

    __slots__ = ("allowed", "disabled", "strict")

    def __init__(self, disabled: bool, allowed: frozenset[str] | None, strict: bool) -> None:
        self.disabled = disabled
        self.allowed = allowed  # None: no allowlist; empty: the variable is set and names nothing
        self.strict = strict

    @classmethod
    def from_environment(cls) -> Settings:
        raw = os.environ.get(ENV_ALLOW)
        allowed = None if raw is None else frozenset(normalize(n.strip()) for n in raw.split(",") if n.strip())
        return cls(_truthy(ENV_DISABLE), allowed, _truthy(ENV_STRICT))

    def blocks(self, ep: EntryPoint) -> str | None:
        """Why ``ep`` must not be imported, or None."""
        if self.disabled:
            return f"{ENV_DISABLE} is set"
        if self.allowed is not None and not {normalize(ep.name), normalize(ep.distribution)} & self.allowed:
            return f"not named in {ENV_ALLOW}" + ("" if self.allowed else " (set, but empty: no plugin is allowed)")
        return None


def check_allowlist(settings: Settings, found: list[EntryPoint]) -> None:
    """Say which names of the allowlist match no installed plugin (a typo would otherwise load nothing, quietly)."""
    if settings.disabled or not settings.allowed:
        return
    known = {normalize(BUILTIN)}
    for ep in found:
        known |= {normalize(ep.name), normalize(ep.distribution)}
    unmatched = sorted(settings.allowed - known)
    if not unmatched:
        return
    installed = ", ".join(f"{ep.name} ({ep.distribution})" for ep in found) or "none"
    text = (
        f"tensorplug: {ENV_ALLOW} names {', '.join(map(repr, unmatched))}, which no installed plugin matches "
        f"(installed plugins: {installed})."
    )
    if settings.strict:  # (load_plugins takes back what was loaded: the built-in plugin)
        raise PluginError(f"{text} {ENV_STRICT} is set, so this is an error.")
    warn(text, stacklevel=3)
