"""Exporters: the formats ``tp.export`` writes, each declared by a plugin (the ``tensorplug_exporters`` hook) or
registered at run time.

An :class:`ExporterSpec` names a format (``"onnx"``) and the function that writes it, best given as a lazy
``"module:attribute"`` name: declaring a format then imports nothing of its library, so ``import tensorplug``
stays cheap with every exporter installed, and the library is imported at the first ``tp.export`` in that
format. Precedence and provenance are those of every registry (see ``tensorplug._plugins._loading``): the
core, then plugins in load order, then runtime registrations; each entry records the distribution that
declared it, and a plugin that fails to load leaves none of its exporters behind.

The exporter is called as ``exporter(request)`` with a :class:`tensorplug.ExportRequest` (the traced program,
the Variables' values, the names of the inputs and outputs, the path and the format's options) and returns
what the format makes (an ``onnx.ModelProto``, say), after writing it to ``request.path`` when that is given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tensorplug._plugins import _front
from tensorplug._plugins._front import EXPORTERS, source_of
from tensorplug._plugins._provenance import caller
from tensorplug._runtime._errors import ExportError, RegistrationError
from tensorplug._runtime._install import pip_install
from tensorplug._runtime._registry import ExporterSpec, exact, exporter_registry

# Formats this project ships as plugins: an unknown format names the distribution that adds it.
SHIPPED_FORMATS: dict[str, str] = {"onnx": "tensorplug-onnx"}


def register_exporter(
    format: str,
    exporter: Callable[[Any], Any] | str,
    description: str = "",
    *,
    override: bool = False,
    runner: Callable[[], Any] | str | None = None,
) -> ExporterSpec:
    """Register ``exporter(request)`` as the writer of ``format`` for :func:`tensorplug.export`, from user code.

    ``runner`` says how to run what the format exports, for checks (``tp.testing.check_kernel``): a callable of
    no arguments returning a ``tensorplug.testing.ExportRunner``, or a ``"module:attribute"`` name of one.

    Shadowing a format already registered must be asked for with ``override=True`` (unregistering yours
    brings the other back); as for kernels, ``source`` is the distribution of the calling plugin's code
    when known, else ``"runtime"``.

    >>> import tensorplug as tp
    >>> spec = tp.register_exporter("kernels", lambda request: [s.kernel for s in request.program.kernel_steps])
    >>> tp.export(lambda x: tp.exp(x) + 1.0, tp.tensor([1.0]), format="kernels")
    ['Exp', 'Add']
    >>> _ = tp.unregister_exporter("kernels")
    """
    name = exact(format)
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise RegistrationError(f"register_exporter({format!r}): the format must be a non-empty str without spaces")
    if not (callable(exporter) or isinstance(exporter, str)):
        raise RegistrationError(f"register_exporter({name!r}): exporter must be callable or 'module:attribute'")
    if not (runner is None or callable(runner) or isinstance(runner, str)):
        raise RegistrationError(
            f"register_exporter({name!r}): runner must be a callable returning a tensorplug.testing.ExportRunner, "
            f"a 'module:attribute' name of one, or None; got {type(runner).__name__}"
        )
    who = caller()
    spec = ExporterSpec(name, exact(exporter), exact(description), source_of(who), exact(runner))
    _front.register(EXPORTERS, spec, override, who)
    return spec


def unregister_exporter(format: str, source: str | None = None) -> ExporterSpec:
    """Remove the active exporter of ``format`` (or the topmost from ``source``); a shadowed one comes back."""
    removed: ExporterSpec = _front.unregister(EXPORTERS, exact(format), source)
    return removed


def exporters() -> list[ExporterSpec]:
    """The active exporter of every format, sorted by format: what ``tp.export(..., format=...)`` accepts.

    >>> import tensorplug as tp
    >>> all(isinstance(spec, tp.ExporterSpec) for spec in tp.exporters())
    True
    """
    return _front.listing(EXPORTERS)


def find_exporter(format: str, call: str) -> ExporterSpec:
    """The active exporter of ``format``, or an ExportError (naming ``call``) that lists the formats installed
    and says which distribution to install."""
    spec: ExporterSpec | None = exporter_registry.get(format) if isinstance(format, str) else None
    if spec is not None:
        return spec
    installed = [s.format for s in exporters()]
    listed = ", ".join(repr(f) for f in installed) if installed else "none"
    hint = ""
    if isinstance(format, str):
        same = [f for f in installed if f.lower() == format.lower()]
        if same:
            hint = f" Did you mean {same[0]!r}? Format names are case-sensitive."
        elif format.lower() in SHIPPED_FORMATS:
            dist = SHIPPED_FORMATS[format.lower()]
            hint = f" The {format.lower()!r} format comes with the {dist} distribution: {pip_install(dist)}"
        else:
            shipped = ", ".join(f"{f!r} ({pip_install(d)})" for f, d in SHIPPED_FORMATS.items())
            hint = f" Formats come from plugins: {shipped}; or register one with tp.register_exporter."
    raise ExportError(f"{call}: no exporter for the format {format!r}; installed formats: {listed}.{hint}")
