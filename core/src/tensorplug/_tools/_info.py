"""What ``tensorplug info`` reports: the plugins, the backends, and the kernel coverage matrix.

:func:`collect` gathers it all into plain data (what ``--json`` prints);
:func:`render` turns that into text for a terminal. Nothing here initialises
a backend (so nothing imports torch) unless ``initialise=True``.
"""

from __future__ import annotations

import contextlib
import os
import platform
from dataclasses import asdict
from typing import Any

from tensorplug._inspection._coverage import coverage, text_table
from tensorplug._plugins._env import ENV_ALLOW, ENV_DISABLE, ENV_STRICT
from tensorplug._plugins._exporters import exporters
from tensorplug._plugins._loading import plugins
from tensorplug._plugins._overrides import gradient_sets
from tensorplug._plugins._provenance import shadowing
from tensorplug._runtime._absent_kernels import absent_now, declares_optional
from tensorplug._runtime._engine import INSTALL_HINT, engine
from tensorplug._runtime._errors import BackendError
from tensorplug._runtime._registry import BUILTIN
from tensorplug.hookspecs import CONTRACT

ENVIRONMENT = (ENV_DISABLE, ENV_ALLOW, ENV_STRICT, "TENSORPLUG_DEBUG", "TENSORPLUG_TORCH_DEVICE")


def collect(initialise: bool = False, strict_error: str | None = None) -> dict[str, Any]:
    """Everything ``tensorplug info`` shows, as JSON-ready data; ``initialise`` tries every backend first.

    ``strict_error`` is the error ``import tensorplug`` raised in strict mode
    (the plugins were then loaded again with strict mode off to show them).
    """
    import numpy
    import pluggy

    from tensorplug import __version__

    if initialise:
        _initialise_all()
    cover = coverage()
    return {
        "tensorplug": __version__,
        "plugin_contract": CONTRACT,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pluggy": pluggy.__version__,
        "environment": {name: os.environ[name] for name in ENVIRONMENT if name in os.environ},
        "strict_error": strict_error,
        "plugins": [asdict(info) for info in plugins()],
        "shadowing": [s.as_dict() for s in shadowing],
        "backends": [_backend(name) for name in engine.names()],
        "default_backend": _default_backend(initialise),
        "gradient_sets": [{"name": s.name, "source": s.source, "description": s.description} for s in gradient_sets()],
        "exporters": [{"format": s.format, "source": s.source, "description": s.description} for s in exporters()],
        "kernels": [asdict(row) for row in cover.rows],
        "absent_kernels": [{"backend": b, "kernel": k, "reason": why} for b, k, why in absent_now()],
        "summary": cover.summary(),
    }


def _initialise_all() -> None:
    """Initialise every backend (the engine records failures), then make the default what an op would pick."""
    for name in engine.names():
        with contextlib.suppress(BackendError):
            engine.initialize(name)
    if engine.active is None:
        working = [name for name in engine.names() if name in engine.instances]
        if working:
            engine.activate(working[0])  # the highest priority that initialised, as ensure_active would choose


def _backend(name: str) -> dict[str, Any]:
    spec = engine.specs[name]
    instance = engine.instances.get(name)
    if instance is not None:
        state = "initialised"
    elif name in engine.failures:
        state = "failed"
    else:
        state = "not initialised"
    return {
        "name": name,
        "priority": engine.priority(name),
        "priority_from": None if isinstance(spec.priority, int) else str(spec.priority),
        "source": spec.source,
        "fallback": spec.fallback,
        "fallback_registered": spec.fallback is None or spec.fallback in engine.specs,
        "state": state,
        "device": None if instance is None else instance.device,
        "error": engine.failures.get(name),
        "kernels_checked": instance is not None or not declares_optional(name),
    }


def _default_backend(initialised: bool) -> dict[str, Any]:
    """Which backend ops use, and why (as far as it is known without initialising one)."""
    names = engine.names()
    if not names:
        hint = engine.no_backend_hint
        reason = f"no backend is registered: {hint}" if hint else f"no backend is installed: {INSTALL_HINT}"
        return {"name": None, "reason": reason}
    if engine.active is not None:
        active = engine.active.name
        above = names[: names.index(active)] if active in names else []
        failed = [name for name in above if name in engine.failures]
        if above and len(failed) == len(above):
            reason = f"the highest priority that initialised ({', '.join(failed)} failed)"
        elif above:
            reason = "chosen with tp.set_backend"
        else:
            reason = f"the highest priority ({engine.priority(active)})"
        return {"name": active, "reason": reason}
    if initialised:
        return {"name": None, "reason": "no backend could be initialised (see the errors above)"}
    first = names[0]
    return {
        "name": first,
        "reason": f"the highest priority ({engine.priority(first)}), if it initialises; "
        "not checked: run `tensorplug info --init` to try every backend",
    }


# -- text -----------------------------------------------------------------------------------------------------------


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    return ["  " + line for line in text_table(headers, rows)]


def _plugin_row(info: dict[str, Any]) -> list[str]:
    parts = []
    if info["backends"]:
        parts.append("backend " + ", ".join(info["backends"]))
    if info["kernels"]:
        parts.append(f"{info['kernels']} kernels")
    if info["gradients"]:
        parts.append(f"{info['gradients']} gradients")
    if info["gradient_sets"]:
        parts.append("sets " + ", ".join(info["gradient_sets"]))
    if info.get("exporters"):
        parts.append("export format " + ", ".join(info["exporters"]))
    if info.get("decompositions"):
        parts.append("decompositions " + ", ".join(info["decompositions"]))
    if info.get("translations"):
        parts.append("export translations " + ", ".join(info["translations"]))
    if info["unknown_backends"]:
        parts.append("kernels for unregistered backend " + ", ".join(info["unknown_backends"]))
    if info.get("unknown_gradients"):
        parts.append("gradients for unknown kernel " + ", ".join(info["unknown_gradients"]))
    if info["shares_name_with"]:
        parts.append("name also used by " + ", ".join(info["shares_name_with"]))
    what = "; ".join(parts) if info["status"] == "loaded" else info["error"] or ""
    contract = CONTRACT if info["distribution"] == BUILTIN else info.get("contract") or "-"
    return [info["name"], info["distribution"], info["version"], contract, info["status"], what]


def _backend_row(info: dict[str, Any], default: str | None) -> list[str]:
    priority = str(info["priority"])
    if info["priority_from"]:
        priority += f" (from {info['priority_from']})"
    state = info["state"]
    if info["error"]:
        state += f": {info['error']}"
    name = info["name"] + (" *" if info["name"] == default else "")
    fallback = info["fallback"] or "-"
    if not info["fallback_registered"]:
        fallback += " (not registered)"
    return [name, priority, info["device"] or "-", fallback, info["source"], state]


def render(data: dict[str, Any], kernels: bool = True) -> str:
    """The text ``tensorplug info`` prints (the kernel matrix is ``tp.coverage().table()``, ending in its summary)."""
    lines = [
        f"tensorplug {data['tensorplug']} (Python {data['python']}, numpy {data['numpy']}, pluggy {data['pluggy']}), "
        f"plugin contract {data['plugin_contract']}",
    ]
    if data["environment"]:
        lines.append("environment: " + ", ".join(f"{k}={v}" for k, v in data["environment"].items()))
    if data["strict_error"]:
        lines += [
            f"strict mode: `import tensorplug` fails with {data['strict_error']}",
            f"(what follows is what loads with {ENV_STRICT} off)",
        ]
    lines += [
        "",
        "Plugins (entry-point group 'tensorplug'; the first is the core's built-in one; contract: the version of the "
        "plugin contract each declares it was written for, - when it declares none):",
    ]
    lines += _table(
        ["name", "distribution", "version", "contract", "status", "registered / error"],
        [_plugin_row(info) for info in data["plugins"]],
    )
    failed = [p for p in data["plugins"] if p["status"] == "failed"]
    if failed:
        lines.append(f"  {len(failed)} plugin(s) failed to load and were rolled back; the others work.")
    for p in data["plugins"]:
        if p["refused_backends"]:  # the error says whose name it is
            lines.append(f"  {p['name']} ({p['distribution']}) failed: {p['error']}")
        if p["status"] == "loaded" and p["unknown_backends"]:
            lines.append(
                f"  {p['name']} ({p['distribution']}) declares kernels for {', '.join(p['unknown_backends'])}, "
                "which no plugin registers: they are kept, and run only if such a backend is registered later"
            )
        if p["status"] == "loaded" and p.get("unknown_gradients"):
            lines.append(
                f"  {p['name']} ({p['distribution']}) declares gradients for {', '.join(p['unknown_gradients'])}, "
                "which no kernel has (misspelled? see its warning): they are never used until such a kernel exists"
            )
    if data.get("shadowing"):
        lines += ["", "Shadowed or removed entries (each also warned, whatever the warning filters):"]
        lines += [f"  {s['kind']} {s['key']}: {s['by']} {s['action']} {s['over']}'s" for s in data["shadowing"]]
    lines += ["", "Backends (highest priority first; * = the default):"]
    default = data["default_backend"]
    if data["backends"]:
        lines += _table(
            ["name", "priority", "device", "fallback", "distribution", "state"],
            [_backend_row(b, default["name"]) for b in data["backends"]],
        )
    else:
        lines.append("  (none)")
    lines.append(f"  default: {default['name'] or '(none)'}: {default['reason']}")
    for b in data["backends"]:
        if not b["fallback_registered"]:
            lines.append(
                f"  {b['name']} falls back to {b['fallback']!r}, which is not registered: a kernel {b['name']} lacks "
                "fails until it is"
            )
    lines += _absent_lines(data.get("absent_kernels", []))
    if data["gradient_sets"]:
        lines += ["", "Gradient sets (enable with tp.use_gradients(name)):"]
        lines += [f"  {s['name']} ({s['source']}): {s['description']}".rstrip(": ") for s in data["gradient_sets"]]
    if data.get("exporters"):
        lines += ["", "Export formats (tp.export(fn, *example_args, format=...)):"]
        lines += [f"  {s['format']} ({s['source']}): {s['description']}".rstrip(": ") for s in data["exporters"]]
    overrides = [k for k in data["kernels"] if k["shadows"]]
    if overrides:
        lines += ["", "Gradient overrides in effect:"]
        lines += [f"  {k['kernel']}: {k['gradient']} (shadows {', '.join(k['shadows'])})" for k in overrides]
    if kernels:
        lines += ["", "Kernels (provider per backend; fallback:<backend> = run there; - = missing):"]
        unchecked = [b["name"] for b in data["backends"] if not b.get("kernels_checked", True)]
        if unchecked:
            lines.append(
                f"  ({', '.join(unchecked)}: not initialised, so the kernels catalogue_kernels names there are listed "
                "as declared; `tensorplug info --init` checks that each is defined)"
            )
        lines += ["  " + line if line else line for line in coverage().table().splitlines()]
    else:
        lines += ["", data["summary"]]
    return "\n".join(lines)


def _absent_lines(absent: list[dict[str, str]]) -> list[str]:
    """One line per backend naming the kernels it names by convention but does not define (not registered)."""
    by_backend: dict[str, dict[str, list[str]]] = {}
    for entry in absent:
        by_backend.setdefault(entry["backend"], {}).setdefault(entry["reason"], []).append(entry["kernel"])
    return [
        f"  {backend}: not registered, as named by convention (catalogue_kernels) but not defined: "
        + "; ".join(f"{', '.join(kernels)} ({reason})" for reason, kernels in reasons.items())
        for backend, reasons in by_backend.items()
    ]
