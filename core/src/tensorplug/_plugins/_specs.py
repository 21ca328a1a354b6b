"""What a plugin declares, checked field by field: each problem raises :class:`PluginProblem`, whose message
names the spec and the field. (Reading a hook's result into specs is a guard: ``tensorplug._plugins._guard``.)
"""

from __future__ import annotations

from collections.abc import Hashable

from tensorplug._plugins._guard import PluginProblem
from tensorplug._runtime._registry import (
    BackendSpec,
    DecompositionSpec,
    ExporterSpec,
    GradientSet,
    GradientSpec,
    KernelSpec,
    TranslationSpec,
)
from tensorplug.kernel_names import CATALOGUE

Spec = BackendSpec | KernelSpec | GradientSpec | GradientSet | ExporterSpec | DecompositionSpec | TranslationSpec


_CANONICAL = {name.lower(): name for name in CATALOGUE}


def _name_problem(value: object) -> str | None:
    if not isinstance(value, str):
        return f"must be a str, not {type(value).__name__}"
    if not value:
        return "must not be empty"
    if not value.isprintable() or " " in value:  # (the one whitespace character isprintable() allows is " ")
        return "must not contain spaces or unprintable characters"
    return None


_KERNEL_NAMES_OK: set[str] = set()  # kernel names found well-formed (every backend declares the same ones)


def _kernel_name_problem(value: object) -> str | None:
    if type(value) is str and value in _KERNEL_NAMES_OK:  # (an exact str: a subclass may hash as another)
        return None
    problem = _name_problem(value)
    if problem is None and isinstance(value, str):
        canonical = _CANONICAL.get(value.lower())
        if canonical is not None and canonical != value:
            problem = f"differs from the canonical kernel name {canonical!r} only in case (see tp.kernel_names)"
    if problem is None and type(value) is str:
        _KERNEL_NAMES_OK.add(value)
    return problem


_MODULES_OK: set[str] = set()  # module names of lazy references found well-formed (a plugin names a few, often)


def _lazy_problem(value: object, none_ok: bool = False) -> str | None:
    """Why ``value`` is not a callable, a well-formed ``"module:attr"`` name (or None when allowed)."""
    if value is None and none_ok:
        return None
    if callable(value):
        return None
    if isinstance(value, str):
        module, sep, attr = value.partition(":")
        if sep and module in _MODULES_OK and attr.isidentifier():
            return None  # (the usual case: one set lookup)
        dotted_ok = all(map(str.isidentifier, module.split("."))) and all(map(str.isidentifier, attr.split(".")))
        if sep and dotted_ok:
            if type(module) is str:  # (an exact str: a subclass may hash as another)
                _MODULES_OK.add(module)
            return None
        return f"lazy reference {value!r} is not of the form 'package.module:attribute'"
    allowed = "a callable, a 'module:attribute' name" + (" or None" if none_ok else "")
    return f"must be {allowed}, not {type(value).__name__}"


def validate(spec: Spec) -> None:
    """Check every field of one declared spec; raise PluginProblem naming the spec and the field."""
    problems: dict[str, str | None] = {}
    if isinstance(spec, BackendSpec):
        problems["name"] = _name_problem(spec.name)
        problems["factory"] = _lazy_problem(spec.factory)
        if not (isinstance(spec.priority, int) and not isinstance(spec.priority, bool)):
            problems["priority"] = _lazy_problem(spec.priority) and "must be an int, a callable or 'module:attribute'"
        if spec.fallback is not None:
            problems["fallback"] = _name_problem(spec.fallback)
    elif isinstance(spec, KernelSpec):
        problems["kernel_name"] = _kernel_name_problem(spec.kernel_name)
        problems["backend_name"] = _name_problem(spec.backend_name)
        problems["kernel"] = _lazy_problem(spec.kernel)
        if spec.setup is not None or spec.dispose is not None:  # (most kernels have neither)
            problems["setup"] = _lazy_problem(spec.setup, none_ok=True)
            problems["dispose"] = _lazy_problem(spec.dispose, none_ok=True)
        problems["override"] = None if isinstance(spec.override, bool) else "must be True or False"
        problems["optional"] = None if isinstance(spec.optional, bool) else "must be True or False"
    elif isinstance(spec, GradientSpec):
        problems["kernel_name"] = _kernel_name_problem(spec.kernel_name)
        problems["grad"] = _lazy_problem(spec.grad, none_ok=True)
        problems["inputs_to_save"] = _inputs_problem(spec.inputs_to_save)
        problems["outputs_to_save"] = _outputs_problem(spec.outputs_to_save)
        problems["override"] = None if isinstance(spec.override, bool) else "must be True or False"
        problems["replay"] = _replay_problem(spec.replay)
    elif isinstance(spec, DecompositionSpec):
        problems["kernel_name"] = _kernel_name_problem(spec.kernel_name)
        problems["fn"] = _lazy_problem(spec.fn)
    elif isinstance(spec, TranslationSpec):
        problems["format"] = _name_problem(spec.format)
        problems["kernel_name"] = _kernel_name_problem(spec.kernel_name)
        problems["translate"] = _lazy_problem(spec.translate)
    elif isinstance(spec, ExporterSpec):
        problems["format"] = _name_problem(spec.format)
        problems["exporter"] = _lazy_problem(spec.exporter)
        problems["description"] = None if isinstance(spec.description, str) else "must be a str"
        problems["runner"] = _lazy_problem(spec.runner, none_ok=True)
    else:
        problems["name"] = _name_problem(spec.name)
        problems["factory"] = _lazy_problem(spec.factory)
        problems["description"] = None if isinstance(spec.description, str) else "must be a str"
        problems["replay"] = _replay_problem(spec.replay)
    if any(problems.values()):
        found = [f"{name} {problem}" for name, problem in problems.items() if problem]
        raise PluginProblem(f"malformed {_spec_text(spec):.120}: {'; '.join(found)}")


def _replay_problem(value: object) -> str | None:
    return None if value is None or isinstance(value, bool) else "must be True, False or None (the default)"


def _spec_text(spec: Spec) -> str:
    if isinstance(spec, KernelSpec):
        return f"KernelSpec ({spec.kernel_name!r}, {spec.backend_name!r})"
    if isinstance(spec, GradientSpec):
        return f"GradientSpec {spec.kernel_name!r}"
    if isinstance(spec, ExporterSpec):
        return f"ExporterSpec {spec.format!r}"
    if isinstance(spec, DecompositionSpec):
        return f"DecompositionSpec {spec.kernel_name!r}"
    if isinstance(spec, TranslationSpec):
        return f"TranslationSpec {spec.format!r} {spec.kernel_name!r}"
    return f"{'BackendSpec' if isinstance(spec, BackendSpec) else 'GradientSet'} {spec.name!r}"


def _inputs_problem(value: object) -> str | None:
    if isinstance(value, str):
        return f"must be a tuple of input names, not the str {value!r} (write ({value!r},))"
    if not isinstance(value, tuple | list) or not all(isinstance(v, str) and v for v in value):
        return "must be a tuple of input names"
    return None


def _outputs_problem(value: object) -> str | None:
    if not isinstance(value, tuple | list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        return "must be a tuple of output indices (ints >= 0)"
    return None


def check_duplicates(specs: list[Spec]) -> None:
    """One plugin declaring the same key twice is a mistake: which one was meant?"""
    seen: set[tuple[str, Hashable]] = set()
    for spec in specs:
        key = (type(spec).__name__, spec.name if isinstance(spec, BackendSpec) else spec.key)
        if key in seen:
            raise PluginProblem(f"declares {key[0]} {key[1]!r} twice")
        seen.add(key)
