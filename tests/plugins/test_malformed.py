"""Malformed declarations, one per case, in this process: each fails its plugin and leaves nothing registered.

Every case is a plugin module built here whose hooks first declare valid
things (a backend, a new kernel with its gradient, an override of numpy's
Multiply) and then one malformed thing; loading it through the loader's
``_load`` (what discovery calls for each entry point) must warn once, mark
the plugin failed with an error naming the problem, and leave the
registries, the backends and the hook manager exactly as they were.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import tensorplug as tp
from tensorplug import BackendSpec, ExporterSpec, GradientSet, GradientSpec, KernelSpec, hookimpl
from tensorplug._plugins import _loading as loader
from tensorplug._plugins._guard import Snapshot
from tensorplug._runtime._engine import engine
from tensorplug._runtime._registry import LAYER_PLUGIN, REGISTRIES


def fn(*args: Any) -> Any:
    raise AssertionError("a function of a plugin that failed to load was called")


def valid() -> dict[str, list[Any]]:
    return {
        "tensorplug_backends": [BackendSpec("malformed-case", fn)],
        "tensorplug_kernels": [
            KernelSpec("MalformedCase", "numpy", fn),
            KernelSpec("Multiply", "numpy", fn, override=True),
        ],
        "tensorplug_gradients": [GradientSpec("MalformedCase", fn)],
        "tensorplug_gradient_sets": [GradientSet("malformed_case", fn)],
        "tensorplug_exporters": [ExporterSpec("malformed-case", fn)],
    }


def returning(value: Any) -> Callable[[], Any]:
    def hook() -> Any:
        return value

    return hook


# (case id, hook, what it returns after the valid specs (or instead of the list, for shape errors), error fragment)
APPENDED: list[tuple[str, str, Any, str]] = [
    ("wrong kind", "tensorplug_kernels", GradientSpec("X", fn), "returned a GradientSpec at index 2"),
    ("not a spec", "tensorplug_gradients", ("Exp", fn), "returned a tuple at index 1"),
    ("kernel name not str", "tensorplug_kernels", KernelSpec(42, "numpy", fn), "kernel_name must be a str, not int"),
    ("empty backend name", "tensorplug_kernels", KernelSpec("X", "", fn), "backend_name must not be empty"),
    ("name with a space", "tensorplug_kernels", KernelSpec("Add ", "numpy", fn), "must not contain spaces"),
    ("wrong case", "tensorplug_kernels", KernelSpec("add", "numpy", fn), "canonical kernel name 'Add' only in case"),
    ("kernel not callable", "tensorplug_kernels", KernelSpec("X", "numpy", 42), "kernel must be a callable"),
    ("lazy without attr", "tensorplug_kernels", KernelSpec("X", "numpy", "pkg.mod"), "is not of the form"),
    ("lazy not dotted", "tensorplug_kernels", KernelSpec("X", "numpy", "pkg mod:f"), "is not of the form"),
    ("setup not callable", "tensorplug_kernels", KernelSpec("X", "numpy", fn, setup=5), "setup must be"),
    (
        "override not bool",
        "tensorplug_kernels",
        KernelSpec("X", "numpy", fn, override="yes"),
        "override must be True or False",
    ),
    ("grad not callable", "tensorplug_gradients", GradientSpec("X", 42), "grad must be a callable"),
    (
        "inputs as a str",
        "tensorplug_gradients",
        GradientSpec("X", fn, inputs_to_save="x"),
        "not the str 'x' (write ('x',))",
    ),
    (
        "negative output",
        "tensorplug_gradients",
        GradientSpec("X", fn, outputs_to_save=(-1,)),
        "outputs_to_save must be",
    ),
    ("bool output", "tensorplug_gradients", GradientSpec("X", fn, outputs_to_save=(True,)), "outputs_to_save must be"),
    (
        "replay not bool",
        "tensorplug_gradients",
        GradientSpec("X", fn, replay="yes"),
        "replay must be True, False or None",
    ),
    ("priority a float", "tensorplug_backends", BackendSpec("b2", fn, priority=1.5), "priority must be an int"),
    ("priority a bool", "tensorplug_backends", BackendSpec("b2", fn, priority=True), "priority must be an int"),
    ("factory None", "tensorplug_backends", BackendSpec("b2", None), "factory must be a callable"),
    ("set factory", "tensorplug_gradient_sets", GradientSet("s2", 3), "factory must be a callable"),
    ("exporter not callable", "tensorplug_exporters", ExporterSpec("f2", 3), "exporter must be a callable"),
    ("format with a space", "tensorplug_exporters", ExporterSpec("my format", fn), "must not contain spaces"),
    ("runner not callable", "tensorplug_exporters", ExporterSpec("f2", fn, runner=3), "runner must be a callable"),
    (
        "same format twice",
        "tensorplug_exporters",
        ExporterSpec("malformed-case", fn),
        "declares ExporterSpec 'malformed-case' twice",
    ),
    (
        "same kernel twice",
        "tensorplug_kernels",
        KernelSpec("MalformedCase", "numpy", fn),
        "declares KernelSpec ('MalformedCase', 'numpy') twice",
    ),
    (
        "same backend twice",
        "tensorplug_backends",
        BackendSpec("malformed-case", fn),
        "declares BackendSpec 'malformed-case' twice",
    ),
    (
        "backend owned by another distribution",
        "tensorplug_backends",
        BackendSpec("numpy", fn),
        "backend 'numpy' claimed by tensorplug-malformed-case 9.9 was refused: it belongs to tensorplug-numpy",
    ),
    (
        "backend owned by another distribution, in other case",
        "tensorplug_backends",
        BackendSpec("NumPy", fn),
        "backend 'NumPy' claimed by tensorplug-malformed-case 9.9 was refused: it belongs to tensorplug-numpy",
    ),
    (
        "backend nobody owns, taken first",
        "tensorplug_backends",
        BackendSpec("fixture", fn),
        "backend 'fixture' claimed by tensorplug-malformed-case 9.9 was refused: tensorplug-fixture-good registered "
        "it first (no installed distribution tensorplug-fixture owns the name",
    ),
]
REPLACED: list[tuple[str, str, Any, str]] = [
    (
        "a single spec",
        "tensorplug_kernels",
        KernelSpec("X", "numpy", fn),
        "must return a list of KernelSpec, got KernelSpec",
    ),
    ("a str", "tensorplug_kernels", "Add", "must return a list of KernelSpec, got str"),
    ("a generator", "tensorplug_gradients", (s for s in ()), "must return a list of GradientSpec, got generator"),
    ("a dict", "tensorplug_backends", {"name": "b"}, "must return a list of BackendSpec, got dict"),
]


def state() -> tuple[Any, ...]:
    """Every entry of every registry (by identity), the backends and the plugins known to the hook manager."""
    stacks = tuple(
        [id(spec) for key in registry.keys() for spec in registry.stack(key)]  # noqa: SIM118
        for registry in REGISTRIES
    )
    return stacks, dict(engine.specs), sorted(name for name, _ in loader.manager.list_name_plugin())


def load(module: ModuleType) -> tuple[tp.PluginInfo, list[str]]:
    info = tp.PluginInfo("case", "tensorplug-malformed-case", "9.9", module.__name__, "loaded")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader._load(module, info, LAYER_PLUGIN, 10_000, strict=False, snapshot=Snapshot())
    return info, [str(w.message) for w in caught if issubclass(w.category, tp.PluginWarning)]


def take_back_since(applied: int) -> None:
    """Undo, newest first, what the plugins loaded since ``len(loader._undo) == applied`` registered."""
    undo = loader._undo[applied:]
    del loader._undo[applied:]
    for action in reversed(undo):
        action()


def module_with(hooks: dict[str, Any]) -> ModuleType:
    module = ModuleType("tp_malformed_case")
    for name, value in hooks.items():
        setattr(module, name, hookimpl(returning(value)))
    return module


def check_failed(module: ModuleType, fragment: str) -> None:
    before = state()
    multiply = tp.get_kernel("Multiply", "numpy")
    info, warned = load(module)
    assert info.status == "failed"
    assert fragment in (info.error or ""), info.error
    assert len(warned) == 1, warned  # reported once: no shadowing warning for what was rolled back
    assert "tensorplug-malformed-case 9.9" in warned[0]
    assert fragment in warned[0]
    assert state() == before
    assert tp.get_kernel("Multiply", "numpy") is multiply
    assert (info.backends, info.kernels, info.gradients, info.gradient_sets, info.exporters) == ([], 0, 0, [], [])


@pytest.mark.parametrize(("hook", "bad", "fragment"), [case[1:] for case in APPENDED], ids=[c[0] for c in APPENDED])
def test_a_malformed_declaration_after_valid_ones_fails_the_plugin_and_leaves_nothing(
    hook: str, bad: Any, fragment: str
) -> None:
    hooks = valid()
    hooks[hook] = [*hooks[hook], bad]
    check_failed(module_with(hooks), fragment)


@pytest.mark.parametrize(("hook", "bad", "fragment"), [case[1:] for case in REPLACED], ids=[c[0] for c in REPLACED])
def test_a_hook_returning_no_list_fails_the_plugin_and_leaves_nothing(hook: str, bad: Any, fragment: str) -> None:
    hooks: dict[str, Any] = valid()
    hooks[hook] = bad
    check_failed(module_with(hooks), fragment)


def test_a_hook_implementation_with_arguments_fails_and_unregisters_its_other_hooks() -> None:
    module = module_with(valid())

    @hookimpl
    def tensorplug_kernels(backend: str) -> list[KernelSpec]:
        return []

    module.tensorplug_kernels = tensorplug_kernels
    check_failed(module, "invalid hook implementation")


def test_the_same_valid_plugin_loads_and_its_registrations_can_be_taken_back() -> None:
    # The control case: without the malformed item the plugin loads, so the cases above fail for their item alone.
    before = state()
    applied = len(loader._undo)
    info, warned = load(module_with(valid()))
    try:
        assert (info.status, info.kernels, info.gradients, info.backends) == ("loaded", 2, 1, ["malformed-case"])
        assert info.exporters == ["malformed-case"]
        assert tp.get_kernel("MalformedCase", "numpy").source == "tensorplug-malformed-case"
        formats = {s.format: s.source for s in tp.exporters()}
        assert formats["malformed-case"] == "tensorplug-malformed-case"
        assert len(warned) == 1, warned  # shadowing another plugin's kernel is said once the plugin has loaded
        assert "('Multiply', 'numpy') is registered by both tensorplug-numpy and tensorplug-malformed-case" in warned[0]
    finally:
        take_back_since(applied)
    assert state() == before


# -- what a plugin does directly (tp.register_* / tp.unregister_*) while it loads --------------------------------------


def hook_doing(action: Callable[[], None], then: Any = ()) -> ModuleType:
    """A valid plugin whose kernel hook first runs ``action`` (a direct call into tensorplug), then returns ``then``
    after its valid kernels (nothing more by default)."""
    hooks = valid()
    kernels = hooks.pop("tensorplug_kernels")
    module = module_with(hooks)

    @hookimpl
    def tensorplug_kernels() -> Any:
        action()
        return [*kernels, *then]

    module.tensorplug_kernels = tensorplug_kernels
    return module


def test_what_a_failing_plugin_unregistered_comes_back() -> None:
    def unregister() -> None:
        tp.unregister_gradient("Relu")
        tp.unregister_kernel("Add", "numpy")

    relu, add = tp.gradient_stack("Relu"), tp.kernel_stack("Add", "numpy")
    check_failed(hook_doing(unregister, then=[GradientSpec("X", fn)]), "returned a GradientSpec at index 2")
    assert (tp.gradient_stack("Relu"), tp.kernel_stack("Add", "numpy")) == (relu, add)
    assert tp.grad(lambda x: tp.sum(tp.relu(x)))(tp.tensor([-1.0, 2.0])).tolist() == [0.0, 1.0]


def test_a_plugin_may_not_replace_another_distributions_backend_directly() -> None:
    check_failed(
        hook_doing(lambda: tp.register_backend("numpy", fn, override=True)),
        "it replaced the backend 'numpy' of tensorplug-numpy while loading",
    )
    assert tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist() == [3.0]


def test_a_plugin_may_not_remove_another_distributions_backend() -> None:
    check_failed(hook_doing(lambda: tp.remove_backend("fixture")), "it removed the backend 'fixture' of")


def test_a_plugin_may_not_register_an_owned_backend_name_directly() -> None:
    check_failed(
        hook_doing(lambda: tp.register_backend("fixture-good", fn)),  # a name tensorplug-fixture-good owns, unused
        "backend 'fixture-good' claimed by tensorplug-malformed-case 9.9 was refused: it belongs to "
        "tensorplug-fixture-good",
    )


def test_a_plugin_that_leaves_an_override_scope_open_fails_and_the_scope_is_closed() -> None:
    check_failed(
        hook_doing(lambda: tp.gradient_overrides({"Relu": None}).__enter__()),
        "left it open",
    )
    assert tp.get_gradient("Relu").source == "tensorplug"  # type: ignore[union-attr]


def test_sys_exit_in_a_hook_fails_the_plugin() -> None:
    check_failed(hook_doing(lambda: sys.exit(3)), "tensorplug_kernels() raised SystemExit: 3")


def test_a_keyboard_interrupt_in_a_hook_propagates_and_leaves_nothing() -> None:
    def interrupt() -> None:
        tp.unregister_gradient("Relu")
        raise KeyboardInterrupt

    before = state()
    with pytest.raises(KeyboardInterrupt):
        load(hook_doing(interrupt))
    assert state() == before


def test_direct_registrations_belong_to_the_plugin_and_warn_as_declarations() -> None:
    def register() -> None:
        tp.register_kernel("Multiply", "numpy", fn, override=True)  # over tensorplug-numpy's: the same layer
        tp.register_kernel("MalformedDirect", "numpy", fn)
        tp.register_gradient("MalformedDirect", fn)
        tp.register_exporter("malformed-direct", fn)

    hooks = valid()
    hooks["tensorplug_kernels"] = [KernelSpec("MalformedCase", "numpy", fn)]  # Multiply only directly
    module = module_with(hooks)
    declared = module.tensorplug_kernels

    @hookimpl
    def tensorplug_kernels() -> Any:
        register()
        return declared()

    module.tensorplug_kernels = tensorplug_kernels
    before = state()
    applied = len(loader._undo)
    info, warned = load(module)
    try:
        assert (info.status, info.kernels, info.gradients) == ("loaded", 3, 2)
        assert info.exporters == ["malformed-direct", "malformed-case"]
        formats = {s.format: s.source for s in tp.exporters()}
        assert formats["malformed-direct"] == "tensorplug-malformed-case"  # what it registers directly is its own
        for name in ("Multiply", "MalformedDirect"):
            assert tp.get_kernel(name, "numpy").source == "tensorplug-malformed-case"  # type: ignore[union-attr]
        assert tp.get_gradient("MalformedDirect").source == "tensorplug-malformed-case"  # type: ignore[union-attr]
        assert [s.source for s in tp.kernel_stack("Multiply", "numpy")] == [
            "tensorplug-numpy",
            "tensorplug-malformed-case",
        ]
        assert warned == [
            "tensorplug: kernel ('Multiply', 'numpy') is registered by both tensorplug-numpy and "
            "tensorplug-malformed-case; tensorplug-malformed-case wins (plugins load in order of distribution "
            "name, later ones shadow earlier ones). Exclude one with TENSORPLUG_PLUGINS to choose."
        ]
    finally:
        take_back_since(applied)
    assert state() == before
