"""Deferred registry entries (``LayeredRegistry.defer``): the core's built-in plugin declares its gradients and
decompositions at import and registers them the first time their tables are used."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import tensorplug as tp
from tensorplug._runtime._registry import LAYER_BUILTIN, LAYER_RUNTIME, Deferred, LayeredRegistry


def _registry(loads: list[int]) -> tuple[LayeredRegistry[Any], list[Any]]:
    registry: LayeredRegistry[Any] = LayeredRegistry("gradient")
    specs = [tp.GradientSpec("Exp", None, source="tensorplug"), tp.GradientSpec("Neg", None, source="tensorplug")]

    def load() -> list[Any]:
        loads.append(1)
        return specs

    registry.defer(Deferred(load, LAYER_BUILTIN, 0))
    return registry, specs


def test_a_miss_adds_the_deferred_entries_once_and_tells_no_listener() -> None:
    loads: list[int] = []
    registry, specs = _registry(loads)
    heard: list[Any] = []
    registry.on_change(heard.append)
    assert loads == []
    assert registry.get("Exp") is specs[0]
    assert registry.get("Neg") is specs[1]
    assert registry.get("Tanh") is None
    assert loads == [1]
    assert heard == []  # they were there all along
    assert registry.deferred is None


def test_every_other_read_or_write_adds_them_first() -> None:
    for use in (
        lambda r: r.keys(),
        lambda r: list(r),
        lambda r: r.stack("Exp"),
        lambda r: r.top_layer("Exp"),
        lambda r: r.snapshot(),
        lambda r: r.add(tp.GradientSpec("Exp", None), LAYER_RUNTIME),
        lambda r: r.add_all([tp.GradientSpec("Exp", None)], LAYER_RUNTIME, 0),
        lambda r: r.pop("Exp"),
    ):
        loads: list[int] = []
        registry, specs = _registry(loads)
        use(registry)
        assert loads == [1]
        assert specs[1] in registry.stack("Neg")


def test_a_later_entry_shadows_a_deferred_one_and_unregistering_it_brings_it_back() -> None:
    registry, specs = _registry([])
    mine = tp.GradientSpec("Exp", None)
    assert registry.add(mine, LAYER_RUNTIME) is specs[0]  # the deferred one was on top: it is shadowed now
    assert registry.get("Exp") is mine
    assert registry.pop("Exp") is mine
    assert registry.get("Exp") is specs[0]


def test_restoring_a_snapshot_taken_before_they_were_added_defers_them_again() -> None:
    loads: list[int] = []
    registry, specs = _registry(loads)
    before = registry.snapshot(settle=False)
    assert loads == []
    assert registry.get("Exp") is specs[0]
    registry.restore(before)
    assert registry.deferred is not None
    assert registry.get("Neg") is specs[1]  # added again
    assert loads == [1, 1]


def test_import_defers_the_builtin_gradients_until_their_first_use() -> None:
    code = (
        "import json, sys\n"
        "import tensorplug as tp\n"
        "at_import = 'tensorplug.gradients' in sys.modules\n"
        "y = tp.tensor([1.0]) + 1\n"
        "after_op = 'tensorplug.gradients' in sys.modules\n"
        "g = tp.grad(lambda v: tp.sum(v * v))(tp.tensor([1.0, 2.0])).tolist()\n"
        "exp = tp.gradient_stack('Exp')\n"
        "print(json.dumps([at_import, after_op, g, [s.source for s in exp], tp.plugins()[0].gradients]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    at_import, after_op, g, exp_sources, count = json.loads(result.stdout.splitlines()[-1])
    assert (at_import, after_op) == (False, False)
    assert g == [2.0, 4.0]
    assert exp_sources == ["tensorplug"]
    assert count == len(tp.kernel_names.CATALOGUE)  # the core states every catalogue kernel's gradient


def test_listing_the_plugins_names_the_builtin_gradients_without_a_backprop() -> None:
    code = (
        "import json, tensorplug as tp\n"
        "info = tp.plugins()[0]\n"
        "print(json.dumps([info.name, info.module, info.gradients, len(info.decompositions)]))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    name, module, gradients, decompositions = json.loads(result.stdout.splitlines()[-1])
    assert (name, module) == ("tensorplug", "tensorplug.gradients")
    assert gradients > 100
    assert decompositions > 0
