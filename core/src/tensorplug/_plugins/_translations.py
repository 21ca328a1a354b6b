"""Export translations from user code: ``tp.register_translation``, ``tp.unregister_translation``,
``tp.translations``, ``tp.translation_stack`` (a plugin declares them with the ``tensorplug_translations`` hook).

A translation says how one export format writes one kernel, in that format's converter convention: the kernel's
author ships it beside the kernel, so that a program calling the kernel exports. ``tp.export`` hands the format's
active translations to its exporter (``ExportRequest.translations``).
"""

from __future__ import annotations

from typing import Any

from tensorplug._plugins import _front
from tensorplug._plugins._front import TRANSLATIONS, source_of
from tensorplug._plugins._provenance import caller
from tensorplug._runtime._errors import RegistrationError
from tensorplug._runtime._registry import TranslationSpec, exact

__all__ = ["register_translation", "translation_stack", "translations", "unregister_translation"]

_DECORATOR: Any = object()


def register_translation(format: str, kernel_name: str, translate: Any = _DECORATOR, *, override: bool = False) -> Any:
    """Register ``translate`` as how the exporter of ``format`` writes kernel ``kernel_name``; usable as a decorator.

    ``translate`` follows the format's converter convention: for ``"onnx"``, ``translate(graph, step)`` adds the
    ONNX nodes computing the kernel (``graph.op("Mul", step.x("x"), ...)``) and returns the value name of its
    output (a list for a kernel of several outputs); ``docs/export.md`` has a worked example. The exporter uses it
    before any converter of its own, and exports a kernel with no translation as its decomposition.

    >>> import tensorplug as tp
    >>> @tp.register_translation("onnx", "Swish")
    ... def swish(graph, step):
    ...     return graph.op("Mul", step.x("x"), graph.op("Sigmoid", step.x("x")))
    >>> [(t.format, t.kernel_name) for t in tp.translations("onnx") if t.kernel_name == "Swish"]
    [('onnx', 'Swish')]
    >>> _ = tp.unregister_translation("onnx", "Swish")
    """
    fmt, name = exact(format), exact(kernel_name)

    def register(fn: Any) -> Any:
        for what, value in (("format", fmt), ("kernel name", name)):
            if not isinstance(value, str) or not value:
                raise RegistrationError(
                    f"register_translation({format!r}, {kernel_name!r}): the {what} must be a non-empty str"
                )
        if not (callable(fn) or isinstance(fn, str)):
            raise RegistrationError(
                f"register_translation({fmt!r}, {name!r}): the translation must be callable (in the format's "
                f"converter convention) or a 'module:attribute' name, got {type(fn).__name__}"
            )
        who = caller()
        spec = TranslationSpec(fmt, name, exact(fn), source_of(who))
        _front.register(TRANSLATIONS, spec, override, who)
        return fn

    return register if translate is _DECORATOR else register(translate)


def unregister_translation(format: str, kernel_name: str, source: str | None = None) -> TranslationSpec:
    """Remove the active translation of ``kernel_name`` for ``format`` (or the topmost from ``source``); a shadowed
    one returns."""
    removed: TranslationSpec = _front.unregister(TRANSLATIONS, (exact(format), exact(kernel_name)), source)
    return removed


def translations(format: str | None = None) -> list[TranslationSpec]:
    """The active translation of every (format, kernel) that has one, sorted; only ``format``'s when given."""
    listed: list[TranslationSpec] = _front.listing(TRANSLATIONS)
    return [spec for spec in listed if format is None or spec.format == format]


def translation_stack(format: str, kernel_name: str) -> list[TranslationSpec]:
    """Every translation registered for ``kernel_name`` in ``format``, lowest precedence first (the last is active)."""
    stack: list[TranslationSpec] = TRANSLATIONS.registry.stack((exact(format), exact(kernel_name)))
    return stack
