"""What the environment says about plugins: the variables read before any plugin module is imported, and the
warnings and hints that follow from them (an allowlist naming nothing installed, one entry-point name declared by
several distributions, no backend because the environment kept the plugins out). See ``tensorplug._plugins._loading``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from tensorplug._plugins._entry_points import EntryPoint, normalize
from tensorplug._runtime._engine import INSTALL_HINT, engine
from tensorplug._runtime._errors import PluginError, warn

if TYPE_CHECKING:
    from tensorplug._plugins._loading import PluginInfo

BUILTIN = "tensorplug"
ENV_DISABLE = "TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD"
ENV_ALLOW = "TENSORPLUG_PLUGINS"
ENV_STRICT = "TENSORPLUG_STRICT_PLUGINS"


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


class Settings(NamedTuple):
    """The three environment variables, read once, before any plugin module is imported (a NamedTuple: a frozen
    dataclass costs ~1 ms of import time)."""

    disabled: bool
    allowed: frozenset[str] | None  # None: no allowlist; empty: the variable is set and names nothing
    strict: bool

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


def no_backend_hint(settings: Settings, infos: list[PluginInfo]) -> str | None:
    """What the first op says when no backend is registered because the environment kept plugins out, or None."""
    blocked = [f"{info.name} ({info.distribution})" for info in infos if info.status == "blocked"]
    if engine.specs or (not settings.disabled and not blocked):
        return None
    if settings.disabled:
        why, undo = f"{ENV_DISABLE} is set, so no plugin was loaded", f"unset {ENV_DISABLE}"
    else:
        why, undo = f"{ENV_ALLOW}={os.environ.get(ENV_ALLOW, '')!r} does not name them", f"name them in {ENV_ALLOW}"
    if not blocked:
        return f"{why}, and none is installed: {INSTALL_HINT}."
    return (
        f"{why} (installed and not loaded: {', '.join(blocked)}). To load the installed backends, {undo}; "
        "or register a backend in this process with tp.register_backend(name, factory)."
    )


def note_shared_names(found: list[EntryPoint], infos: list[PluginInfo], settings: Settings) -> None:
    """Record entry-point names that several distributions declare, and warn once per name when several load.

    Every such plugin is loaded (unless blocked) and listed: a plugin's
    identity is its distribution and its name, so none is dropped.
    """
    by_name: dict[str, list[PluginInfo]] = {}
    loading: dict[str, int] = {}
    for ep, info in zip(found, infos, strict=True):
        key = normalize(info.name)
        by_name.setdefault(key, []).append(info)
        loading[key] = loading.get(key, 0) + (settings.blocks(ep) is None)
    for key, group in by_name.items():
        dists = sorted({info.distribution for info in group})
        if len(dists) < 2:
            continue
        for info in group:
            info.shares_name_with = [d for d in dists if d != info.distribution]
        if loading[key] < 2:
            continue
        listing = ", ".join(f"{info.distribution} {info.version} ({info.module})" for info in group)
        warn(
            f"tensorplug: the plugin name {group[0].name!r} is declared by {len(dists)} distributions: {listing}. "
            f"All of them load; in {ENV_ALLOW} the name {group[0].name!r} selects all of them, a distribution "
            "name selects one.",
            stacklevel=3,
        )


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
