"""Registries: precedence, explicit overrides, provenance, decorators, restore on unregister."""

from __future__ import annotations

from typing import Any

import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing import restored_registries


def double_add(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return (inputs["a"] + inputs["b"]) * 2


def test_provenance_of_builtin_entries() -> None:
    kernel = tp.get_kernel("Add", "numpy")
    assert kernel is not None
    assert kernel.source == "tensorplug-numpy"
    assert kernel.key == ("Add", "numpy")
    gradient = tp.get_gradient("Add")
    assert gradient is not None
    assert gradient.source == "tensorplug"
    assert tp.get_kernel("Add") == kernel  # the active backend by default
    assert tp.get_kernel("Nope", "numpy") is None


@pytest.mark.usefixtures("tensorplug_registries")
def test_shadowing_needs_override_and_unregister_restores() -> None:
    with pytest.raises(tp.RegistrationError, match=r"\('Add', 'numpy'\) is already registered by tensorplug-numpy"):
        tp.register_kernel("Add", "numpy", double_add)
    tp.register_kernel("Add", "numpy", double_add, override=True)
    assert (tp.tensor([1.0]) + tp.tensor([2.0])).tolist() == [6.0]
    assert [s.source for s in tp.kernel_stack("Add", "numpy")] == ["tensorplug-numpy", "runtime"]
    removed = tp.unregister_kernel("Add", "numpy")
    assert removed.kernel is double_add
    assert (tp.tensor([1.0]) + tp.tensor([2.0])).tolist() == [3.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_reregistering_the_same_function_is_quiet() -> None:
    tp.register_kernel("Twice", "numpy", double_add)
    tp.register_kernel("Twice", "numpy", double_add)  # a notebook cell run again
    assert len(tp.kernel_stack("Twice", "numpy")) == 1
    tp.unregister_kernel("Twice", "numpy")  # one unregister removes it
    assert tp.get_kernel("Twice", "numpy") is None


def test_unregister_unknown_is_an_error() -> None:
    with pytest.raises(tp.RegistrationError, match="no kernel registered for"):
        tp.unregister_kernel("Nope", "numpy")
    with pytest.raises(tp.RegistrationError, match=r"from 'somebody'.*registered by: tensorplug"):
        tp.unregister_gradient("Add", source="somebody")


@pytest.mark.usefixtures("tensorplug_registries")
def test_gradient_override_and_restore() -> None:
    x = tp.tensor(2.0)
    assert tp.grad(tp.square)(x).item() == 4.0

    @tp.register_gradient(K.SQUARE, override=True)
    def constant(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return (dy * 7.0,)

    assert tp.grad(tp.square)(x).item() == 7.0
    spec = tp.get_gradient(K.SQUARE)
    assert spec is not None
    assert spec.source == "runtime"
    assert [s.source for s in tp.gradient_stack(K.SQUARE)] == ["tensorplug", "runtime"]
    tp.unregister_gradient(K.SQUARE)
    assert tp.grad(tp.square)(x).item() == 4.0


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_new_op_with_its_own_kernel_and_gradient() -> None:
    @tp.register_kernel("Cube", "numpy")
    def cube(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["x"] ** 3

    @tp.register_gradient("Cube", inputs_to_save=["x"])
    def cube_grad(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        (x,) = saved
        return (dy * 3.0 * x * x,)

    def op(x: tp.Tensor) -> tp.Tensor:
        return tp.run_kernel("Cube", {"x": x})  # type: ignore[no-any-return]

    assert op(tp.tensor([2.0])).tolist() == [8.0]
    tp.testing.check_grads(op, [tp.tensor([0.5, -1.5])], order=2)


def test_registration_rejects_non_callables() -> None:
    with pytest.raises(tp.RegistrationError, match="must be callable"):
        tp.register_kernel("Bad", "numpy", 42)  # type: ignore[call-overload]
    with pytest.raises(tp.RegistrationError, match="must be callable"):
        tp.register_gradient("Bad", 42)  # type: ignore[call-overload]
    assert tp.get_kernel("Bad", "numpy") is None
    assert tp.get_gradient("Bad") is None


def test_every_core_kernel_has_a_gradient_entry() -> None:
    missing = [name for name in K.CATALOGUE if tp.get_gradient(name) is None]
    assert missing == []


def test_the_core_declares_only_well_formed_specs() -> None:
    # Import skips validating the core's own plugin (its ~110 gradient specs); this is where they are checked,
    # with the very validation every installed plugin goes through.
    from tensorplug import gradients
    from tensorplug._plugins._specs import check_duplicates, validate

    specs = gradients.tensorplug_gradients()
    assert len(specs) > 100
    for spec in specs:
        validate(spec)
    check_duplicates(specs)


# -- gradient names: refused when they look like a misspelled kernel --------------------------------------------------


def test_register_gradient_refuses_a_name_differing_only_in_case() -> None:
    with pytest.raises(tp.RegistrationError, match=r"register_gradient\('relu'\): 'relu' differs from .* 'Relu'"):
        tp.register_gradient("relu", lambda dy, saved, attrs: (dy,), override=True)
    with pytest.raises(tp.RegistrationError, match="only in case"):
        tp.register_gradient("relu", lambda dy, saved, attrs: (dy,), new_kernel=True)  # new or not: refused
    assert [spec.source for spec in tp.gradient_stack("Relu")] == ["tensorplug"]
    assert tp.gradient_stack("relu") == []


@pytest.mark.usefixtures("tensorplug_registries")
def test_register_gradient_refuses_a_near_miss_unless_told_it_is_a_new_kernel() -> None:
    with pytest.raises(tp.RegistrationError, match=r"'Rleu' is not a known kernel .*did you mean 'Relu'\?.*new_kernel"):
        tp.register_gradient("Rleu", lambda dy, saved, attrs: (dy,))
    assert tp.get_gradient("Rleu") is None
    tp.register_gradient("Rleu", lambda dy, saved, attrs: (dy,), new_kernel=True)
    assert tp.get_gradient("Rleu").source == "runtime"  # type: ignore[union-attr]


@pytest.mark.usefixtures("tensorplug_registries")
def test_register_gradient_accepts_a_new_kernel_before_or_after_its_kernel() -> None:
    tp.register_gradient("Cube", lambda dy, saved, attrs: (dy,))  # far from every known name: no flag needed
    tp.register_kernel("Gelu", "numpy", lambda inputs, attrs, backend: inputs["x"])
    tp.register_gradient("Gelu", lambda dy, saved, attrs: (dy,))  # its kernel exists: no flag needed
    assert tp.get_gradient("Gelu") is not None


# -- LayeredRegistry.restore: what a failed plugin's rollback uses -----------------------------------------------------


@pytest.mark.usefixtures("tensorplug_registries")  # LayeredRegistry itself is tested: a failure must not leak
def test_restore_brings_back_removed_entries_and_drops_added_ones() -> None:
    from tensorplug._runtime._registry import gradient_registry

    before = gradient_registry.snapshot()
    keys = gradient_registry.keys()
    relu = tp.gradient_stack("Relu")
    tp.unregister_gradient("Relu")
    tp.register_gradient("Exp", lambda dy, saved, attrs: (dy,), override=True)
    tp.register_gradient("RestoreProbe", lambda dy, saved, attrs: (dy,))
    assert [s.kernel_name for s in gradient_registry.removed_since(before)] == ["Relu"]
    assert sorted(s.kernel_name for s in gradient_registry.added_since(before)) == ["Exp", "RestoreProbe"]
    gradient_registry.restore(before)
    assert tp.gradient_stack("Relu") == relu
    assert [s.source for s in tp.gradient_stack("Exp")] == ["tensorplug"]
    assert tp.get_gradient("RestoreProbe") is None
    assert gradient_registry.keys() == keys  # in their order
    assert tp.grad(lambda x: tp.sum(tp.relu(x)))(tp.tensor([-1.0, 2.0])).tolist() == [0.0, 1.0]


def test_restored_registries_puts_kernels_gradients_and_gradient_sets_back() -> None:
    def seven(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["a"] * 0 + 7

    kernels, relu, sets = tp.kernel_stack("Add", "numpy"), tp.gradient_stack("Relu"), tp.gradient_sets()
    with restored_registries():
        tp.register_kernel("Add", "numpy", seven, override=True)
        tp.register_kernel("IsolationProbe", "numpy", seven)
        tp.unregister_gradient("Relu")
        tp.register_gradient_set("isolation_probe", lambda: [], "a set that is undone")
        assert (tp.tensor([1.0]) + 1.0).tolist() == [7.0]
    assert tp.kernel_stack("Add", "numpy") == kernels
    assert tp.get_kernel("IsolationProbe", "numpy") is None
    assert tp.gradient_stack("Relu") == relu
    assert tp.gradient_sets() == sets
    assert (tp.tensor([1.0]) + 1.0).tolist() == [2.0]  # the dispatch table follows
    assert tp.grad(lambda x: tp.sum(tp.relu(x)))(tp.tensor([-1.0, 2.0])).tolist() == [0.0, 1.0]


# -- LayeredRegistry.add_all: how a plugin's declarations are added at import ------------------------------------------


def test_add_all_stacks_and_reports_as_adding_each_in_turn_would() -> None:
    from tensorplug._runtime._registry import LayeredRegistry

    def filled() -> LayeredRegistry[tp.GradientSpec]:
        registry: LayeredRegistry[tp.GradientSpec] = LayeredRegistry("gradient")
        registry.add(tp.GradientSpec("A", None, source="core"), 0, 0)
        registry.add(tp.GradientSpec("B", None, source="later"), 2, 5)  # above the layer added below: stays on top
        return registry

    batch = [
        tp.GradientSpec(name, None, source=source) for name, source in [("A", "p"), ("B", "p"), ("C", "p"), ("C", "q")]
    ]
    one_by_one, at_once = filled(), filled()
    tops = []
    for spec in batch:
        tops.append(one_by_one.top_layer(spec.key))
        one_by_one.add(spec, 1, 3)
    changed: list[object] = []
    at_once.on_change(changed.append)

    assert at_once.add_all(batch, 1, 3) == tops
    assert at_once.snapshot() == one_by_one.snapshot()  # every key's stack, entry by entry (layer, rank, spec)
    assert [s.source for s in at_once.stack("A")] == ["core", "p"]
    assert [s.source for s in at_once.stack("B")] == ["p", "later"]
    assert [s.source for s in at_once.stack("C")] == ["p", "q"]
    assert changed == ["A", "B", "C", "C"]


# -- one registration front for every kind ----------------------------------------------------------------------------


def _writer(request: Any) -> Any:
    return None


def _empty_set() -> list[tp.GradientSpec]:
    return []


def _decomposed(inputs: dict[str, Any], attrs: dict[str, Any]) -> Any:
    return inputs["x"]


KINDS: dict[str, tuple[Any, Any, Any]] = {
    # kind: (register an entry of that kind, unregister it, the sources of the key's entries)
    "kernel": (
        lambda **kw: tp.register_kernel("Add", "numpy", double_add, **kw),
        lambda: tp.unregister_kernel("Add", "numpy"),
        lambda: [s.source for s in tp.kernel_stack("Add", "numpy")],
    ),
    "gradient": (
        lambda **kw: tp.register_gradient("Exp", lambda dy, saved, attrs: (dy,), **kw),
        lambda: tp.unregister_gradient("Exp"),
        lambda: [s.source for s in tp.gradient_stack("Exp")],
    ),
    "gradient set": (
        lambda **kw: tp.register_gradient_set("front_probe", _empty_set, **kw),
        lambda: tp.unregister_gradient_set("front_probe"),
        lambda: [s.source for s in tp.gradient_sets() if s.name == "front_probe"],
    ),
    "exporter": (
        lambda **kw: tp.register_exporter("front_probe", _writer, **kw),
        lambda: tp.unregister_exporter("front_probe"),
        lambda: [s.source for s in tp.exporters() if s.format == "front_probe"],
    ),
    "decomposition": (
        lambda **kw: tp.register_decomposition("FrontProbe", _decomposed, **kw),
        lambda: tp.unregister_decomposition("FrontProbe"),
        lambda: [s.source for s in tp.decomposition_stack("FrontProbe")],
    ),
    "translation": (
        lambda **kw: tp.register_translation("front_probe", "FrontProbe", _writer, **kw),
        lambda: tp.unregister_translation("front_probe", "FrontProbe"),
        lambda: [s.source for s in tp.translation_stack("front_probe", "FrontProbe")],
    ),
}


@pytest.mark.usefixtures("tensorplug_registries")
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_refuses_a_silent_shadowing_and_restores_on_unregister(kind: str) -> None:
    register, unregister, sources = KINDS[kind]
    if kind in ("gradient set", "exporter"):  # no entry of the core to shadow: a first one from user code
        register()
    if kind == "decomposition":  # another function (the same one registered again replaces it quietly)
        tp.register_decomposition("FrontProbe", lambda inputs, attrs: inputs["x"] * 1.0)
    if kind == "translation":
        tp.register_translation("front_probe", "FrontProbe", lambda graph, step: None)
    before = sources()
    assert before
    refusal = rf"^{kind} .* is already registered by \S+; pass override=True to shadow it \(unregistering yours later "
    with pytest.raises(tp.RegistrationError, match=refusal + r"restores it\)$"):
        register()
    register(override=True)
    assert sources()[-1] == "runtime"
    unregister()
    assert sources() == before


def test_each_kind_row_names_the_table_the_spec_type_and_the_hook_that_declares_it() -> None:
    from tensorplug import hookspecs
    from tensorplug._plugins._front import KINDS
    from tensorplug._runtime._registry import REGISTRIES

    assert tuple(kind.registry for kind in KINDS) == REGISTRIES  # the order a plugin's rollback restores them in
    for kind in KINDS:
        hook = getattr(hookspecs, kind.hook)
        assert kind.spec.__name__ in str(hook.__annotations__["return"])
        assert kind.registry.kind.replace(" ", "_") == kind.function
