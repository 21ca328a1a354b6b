"""The guards against a broken or hostile plugin, each on its own, with fake hook results: no plugin is loaded.

The same refusals seen through real installed plugins are in tests/plugins (test_hostile, test_malformed).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

import tensorplug as tp
from tensorplug._plugins._guard import (
    MAX_DECLARATIONS,
    ClaimRefused,
    PluginProblem,
    Snapshot,
    check_claim,
    declarations,
    is_plugin_failure,
    unknown_hooks,
)
from tensorplug._plugins._loading import HOOKS
from tensorplug._runtime._engine import engine


def kernel(name: str = "Exp") -> tp.KernelSpec:
    return tp.KernelSpec(name, "numpy", "mod:fn")


# -- what a hook returns ----------------------------------------------------------------------------------------------


def test_a_hook_returning_none_declares_nothing_and_a_list_is_read_as_given() -> None:
    assert declarations("tensorplug_kernels", lambda: None, tp.KernelSpec) == []
    specs = [kernel("Exp"), kernel("Log")]
    assert declarations("tensorplug_kernels", lambda: specs, tp.KernelSpec) == specs


@pytest.mark.parametrize("error", [ValueError("no kernels today"), SystemExit(3), GeneratorExit()])
def test_a_hook_that_raises_anything_but_keyboardinterrupt_is_the_plugins_failure(error: BaseException) -> None:
    def hook() -> Any:
        raise error

    with pytest.raises(PluginProblem, match=rf"tensorplug_kernels\(\) raised {type(error).__name__}"):
        declarations("tensorplug_kernels", hook, tp.KernelSpec)


def test_a_keyboardinterrupt_in_a_hook_is_the_users_and_propagates() -> None:
    def hook() -> Any:
        raise KeyboardInterrupt

    assert not is_plugin_failure(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        declarations("tensorplug_kernels", hook, tp.KernelSpec)


@pytest.mark.parametrize("result", [kernel(), "Exp", {"Exp": kernel()}, 3])
def test_a_hook_must_return_a_sequence(result: object) -> None:
    with pytest.raises(PluginProblem, match=r"tensorplug_kernels\(\) must return a list of KernelSpec, got"):
        declarations("tensorplug_kernels", lambda: result, tp.KernelSpec)


def test_an_item_of_another_type_is_named_with_its_index() -> None:
    with pytest.raises(PluginProblem, match=r"returned a dict at index 1 .*expected KernelSpec"):
        declarations("tensorplug_kernels", lambda: [kernel(), {"kernel_name": "Exp"}], tp.KernelSpec)


class Endless(Sequence[Any]):
    """A sequence that says it is short and never ends."""

    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: Any) -> Any:
        return kernel()

    def __iter__(self) -> Iterator[Any]:
        while True:
            yield kernel()


def test_a_sequence_that_never_ends_fails_instead_of_hanging() -> None:
    with pytest.raises(PluginProblem, match=f"of more than {MAX_DECLARATIONS} items"):
        declarations("tensorplug_kernels", Endless, tp.KernelSpec)


class Exploding(Sequence[Any]):
    def __len__(self) -> int:
        return 1

    def __getitem__(self, index: Any) -> Any:
        raise RuntimeError("boom")


def test_a_sequence_that_raises_while_read_is_the_plugins_failure() -> None:
    with pytest.raises(PluginProblem, match=r"iterating what tensorplug_kernels\(\) returned .*RuntimeError: boom"):
        declarations("tensorplug_kernels", Exploding, tp.KernelSpec)


class Impostor(str):
    """A name that passes for "Exp" in comparisons while it is another string."""

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("Exp")


def test_names_of_a_str_subclass_become_exact_strs_unless_trusted() -> None:
    (spec,) = declarations("tensorplug_kernels", lambda: [kernel(Impostor("Cube"))], tp.KernelSpec)
    assert type(spec.kernel_name) is str
    assert spec.kernel_name == "Cube"
    (trusted,) = declarations("tensorplug_kernels", lambda: [kernel(Impostor("Cube"))], tp.KernelSpec, trusted=True)
    assert type(trusted.kernel_name) is Impostor


# -- hook names -------------------------------------------------------------------------------------------------------


def test_hooks_that_match_no_hookspec_are_refused_with_the_closest_name() -> None:
    known = [name for name, _ in HOOKS]
    assert unknown_hooks([], known) is None
    refusal = unknown_hooks(["tensorplug_kernel", "tensorplug_unrelated_thing"], known)
    assert refusal is not None
    assert "'tensorplug_kernel' (did you mean 'tensorplug_kernels'?)" in refusal
    assert "the hooks are tensorplug_backends, tensorplug_kernels" in refusal


# -- backend names ----------------------------------------------------------------------------------------------------


def test_a_backend_name_owned_by_another_distribution_is_refused() -> None:
    owners = {"fast": "tensorplug-fast"}
    check_claim("fast", "tensorplug-fast", "1.0", owners, {})  # the owner itself
    check_claim("Fast", "tensorplug_fast", "1.0", owners, {})  # names normalized
    with pytest.raises(ClaimRefused, match=r"backend 'fast' claimed by other 2.0 was refused: it belongs to") as info:
        check_claim("fast", "other", "2.0", owners, {})
    assert info.value.backend == "fast"


def test_a_free_backend_name_goes_to_the_first_plugin_that_claims_it() -> None:
    holders = {"free": tp.BackendSpec("free", "mod:make", source="first")}
    check_claim("free", "first", "1.0", {}, holders)
    with pytest.raises(ClaimRefused, match="first registered it first"):
        check_claim("free", "second", "1.0", {}, holders)


# -- what a plugin leaves changed while it loads ----------------------------------------------------------------------


def test_nothing_changed_since_the_snapshot_is_no_refusal() -> None:
    assert Snapshot().refusal("tensorplug-anything") is None


def test_a_scope_left_open_is_refused_and_restore_leaves_it() -> None:
    snapshot = Snapshot()
    scope = tp.no_grad()
    scope.__enter__()
    try:
        refusal = snapshot.refusal("tensorplug-anything")
    finally:
        snapshot.restore()
    assert refusal is not None
    assert "left it open" in refusal
    assert snapshot.scopes_left_open() is None


def test_a_patched_public_api_is_refused_and_put_back() -> None:
    original = tp.add
    snapshot = Snapshot()
    tp.add = lambda *args: None  # type: ignore[assignment]
    refusal = snapshot.refusal("tensorplug-anything")
    snapshot.restore()
    assert refusal is not None
    assert "changed tensorplug's public API while loading (tp.add)" in refusal
    assert tp.add is original


def test_removing_another_distributions_backend_is_refused_and_undone() -> None:
    spec = tp.BackendSpec("guarded", "mod:make", source="tensorplug-owner")
    engine.add_backend(spec)
    try:
        snapshot = Snapshot()
        engine.remove_backend("guarded")
        assert snapshot.refusal("tensorplug-owner") is None  # its own backend
        refusal = snapshot.refusal("tensorplug-other")
        assert refusal is not None
        assert "removed the backend 'guarded' of tensorplug-owner" in refusal
        snapshot.restore()
        assert engine.specs["guarded"] is spec
    finally:
        engine.remove_backend("guarded")


@pytest.mark.usefixtures("tensorplug_registries")
def test_restore_takes_back_what_was_registered_and_brings_back_what_was_removed() -> None:
    snapshot = Snapshot()
    tp.register_kernel("GuardCube", "numpy", lambda inputs, attrs, backend: inputs["x"] ** 3)
    with pytest.warns(tp.PluginWarning, match="removed the gradient 'Exp' of tensorplug"):
        removed = tp.unregister_gradient("Exp")
    snapshot.restore()
    assert tp.get_kernel("GuardCube", "numpy") is None
    assert tp.get_gradient("Exp") is removed
