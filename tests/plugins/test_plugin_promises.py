"""More promises of the "Security" section of docs/plugins.md, against tensorplug-fixture-hostile really installed.

As in test_hostile.py, each plugin of that distribution misbehaves only when
``TP_FIXTURE_HOSTILE`` names it, and each test runs a fresh subprocess:
a hook whose result never ends, plugin code that overrides a kernel after
loading (a lazy priority function, a thread), a plugin that switches the
backend, monkeypatches the API, passes a ``str`` subclass for a kernel
name, leaves a ``tp.debug()`` scope open, misspells a gradient's kernel,
or silences ``tp.PluginWarning`` before shadowing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib.metadata import version
from types import ModuleType

import pytest
from test_discovery import GOOD, NUMPY, PRELUDE, clean_env, run_script
from test_hostile import HOSTILE, about, hostile_row, info_command
from test_malformed import load, take_back_since

import tensorplug as tp
from tensorplug import hookimpl
from tensorplug._plugins import _loading as loader

HOSTILE_VERSION = version(HOSTILE)


# -- a hook result that never ends -----------------------------------------------------------------------------------


def test_a_hook_returning_a_sequence_that_never_ends_fails_that_plugin_and_import_returns() -> None:
    body = """
        result["endless"] = sources("FixtureEndless", "numpy")
        result["product"] = (tp.tensor([2.0]) * tp.tensor([3.0])).tolist()
        report()
    """
    try:
        proc = subprocess.run(
            [sys.executable, "-P", "-c", PRELUDE + textwrap.dedent(body)],
            env=clean_env(TP_FIXTURE_HOSTILE="endless"),
            capture_output=True,
            text=True,
            timeout=60,  # a hang guard: the import takes well under a second when it returns at all
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("import tensorplug did not return: the endless sequence was read to its (missing) end")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.split("RESULT ", 1)[1])
    row = hostile_row(out, "endless")
    assert row[3] == "failed"
    assert row[4] == (
        "tensorplug_kernels() returned a Endless of more than 10000 items (one that never ends?); return a list "
        "holding each declaration once"
    )
    assert out["endless"] == []
    assert ["numpy", NUMPY, version(NUMPY), "loaded", None] in out["plugins"]
    assert out["product"] == [6.0]


# -- runtime overrides, whoever makes them ---------------------------------------------------------------------------

RECORD_RUNTIME_WARNINGS = """
def runtime_warnings(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [str(w.message) for w in caught if issubclass(w.category, tp.PluginWarning)]
"""


def recording(body: str) -> str:
    """``body`` after a helper ``runtime_warnings(action)``: the PluginWarnings that calling ``action()`` gives."""
    return RECORD_RUNTIME_WARNINGS + textwrap.dedent(body)


def overridden_by(module: str) -> str:
    return (
        f"tensorplug: tp.register_kernel('Multiply', 'numpy', override=True) called from '{module}' (distribution "
        f"{HOSTILE} {HOSTILE_VERSION}) shadows the kernel ('Multiply', 'numpy') of {NUMPY}. Unregistering it brings "
        "that one back; tp.kernel_stack shows who provides what."
    )


def test_a_lazy_priority_function_that_overrides_a_kernel_at_the_first_op_warns_naming_its_plugin() -> None:
    out = run_script(
        recording("""
        def first_op():
            result["product"] = (tp.tensor(2.0) * tp.tensor(3.0)).item()

        result["runtime_warnings"] = runtime_warnings(first_op)
        result["stack"] = sources("Multiply", "numpy")
        """),
        TP_FIXTURE_HOSTILE="lazy",
    )
    assert hostile_row(out, "lazy")[3] == "loaded"
    assert out["product"] == 12.0  # the override works (user code may do the same) ...
    assert out["runtime_warnings"] == [overridden_by("tp_fixture_hostile.lazy")]  # ... but never unseen
    assert out["stack"] == [NUMPY, HOSTILE]


def test_a_thread_a_plugin_started_at_import_that_overrides_a_kernel_warns_naming_its_plugin() -> None:
    out = run_script(
        recording("""
        from tp_fixture_hostile import thread

        def let_it_run():
            thread.GO.set()
            assert thread.DONE.wait(60)

        result["before"] = (tp.tensor(2.0) * tp.tensor(3.0)).item()
        result["runtime_warnings"] = runtime_warnings(let_it_run)
        result["after"] = (tp.tensor(2.0) * tp.tensor(3.0)).item()
        result["source"] = tp.get_kernel("Multiply", "numpy").source
        """),
        TP_FIXTURE_HOSTILE="thread",
    )
    assert (out["before"], out["after"]) == (6.0, 18.0)
    assert out["runtime_warnings"] == [overridden_by("tp_fixture_hostile.thread")]
    assert out["source"] == HOSTILE


def test_user_code_overriding_or_removing_another_distributions_kernel_warns_and_its_own_stays_quiet() -> None:
    out = run_script(
        recording("""
        def double(inputs, attrs, backend):
            return inputs["a"] * inputs["b"] * 2

        result["override"] = runtime_warnings(lambda: tp.register_kernel("Multiply", "numpy", double, override=True))
        result["again"] = runtime_warnings(lambda: tp.register_kernel("Multiply", "numpy", double, override=True))
        result["source"] = tp.get_kernel("Multiply", "numpy").source
        result["own"] = runtime_warnings(lambda: tp.unregister_kernel("Multiply", "numpy"))
        result["own"] += runtime_warnings(lambda: tp.unregister_kernel("Multiply", "numpy"))
        result["numpy"] = runtime_warnings(lambda: tp.unregister_kernel("Multiply", "numpy"))
        """)
    )
    assert out["override"] == [
        "tensorplug: tp.register_kernel('Multiply', 'numpy', override=True) called from '__main__' shadows the "
        f"kernel ('Multiply', 'numpy') of {NUMPY}. Unregistering it brings that one back; tp.kernel_stack shows "
        "who provides what."
    ]
    assert out["source"] == "runtime"
    assert out["again"] == out["own"] == []  # over, and removing, what the same code registered: quiet
    assert out["numpy"] == [
        f"tensorplug: tp.unregister_kernel('Multiply', 'numpy') called from '__main__' removed the kernel "
        f"('Multiply', 'numpy') of {NUMPY}; what it shadowed, if anything, is active now (tp.kernel_stack shows who "
        "provides what)."
    ]


# -- what a failed or misbehaving plugin leaves behind ---------------------------------------------------------------


def test_a_failed_plugins_set_backend_is_undone() -> None:
    out = run_script(
        """
        result["backend"] = tp.get_backend()
        result["sum"] = tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist()
        """,
        TP_FIXTURE_HOSTILE="switches",
    )
    row = hostile_row(out, "switches")
    assert (row[3], row[4]) == (
        "failed",
        "importing 'tp_fixture_hostile.switches' raised RuntimeError: tp_fixture_hostile.switches fails after "
        "tp.set_backend('fixture')",
    )
    assert out["backend"] == "numpy"  # "fixture" would stay active: the first op picks by priority again
    assert out["sum"] == [3.0]
    data = json.loads(info_command("--json", TP_FIXTURE_HOSTILE="switches", PYTHONWARNINGS="ignore").stdout)
    states = {b["name"]: b["state"] for b in data["backends"]}
    assert states["fixture"] == "not initialised"  # the instance it made was disposed with it


def test_a_plugin_that_loads_but_switched_the_backend_has_the_switch_undone_with_a_warning() -> None:
    """(In this process, as in test_malformed.py: the plugin is a module built here, loaded as discovery does.)"""
    module = ModuleType("tp_switching_case")

    @hookimpl
    def tensorplug_kernels() -> list[tp.KernelSpec]:
        tp.set_backend("fixture")  # tensorplug-fixture-good's backend
        return []

    module.tensorplug_kernels = tensorplug_kernels  # type: ignore[attr-defined]
    before = tp.get_backend()
    applied = len(loader._undo)
    try:
        info, warned = load(module)
        assert info.status == "loaded"
        assert warned == [
            "tensorplug: plugin 'case' from tensorplug-malformed-case 9.9 made 'fixture' the active backend while "
            "loading (tp.set_backend, or an op run while importing); that was undone: which backend ops use is the "
            "user's choice (tp.set_backend) or, by default, the highest-priority one."
        ]
        assert tp.get_backend() == before
    finally:
        take_back_since(applied)
        tp.set_backend(before)


def test_a_plugin_that_monkeypatches_the_public_api_fails_and_the_originals_are_put_back() -> None:
    out = run_script(
        """
        from tensorplug.ops import _binary

        a, b = tp.tensor([1.0]), tp.tensor([2.0])
        result["values"] = [tp.add(a, b).tolist(), (a + b).tolist()]
        ours = tp.Tensor.__add__.__module__.startswith("tensorplug.")  # not the fixture's patch
        result["same"] = [tp.add is _binary.add, ours, hasattr(tp, "fixture_patched")]
        """,
        TP_FIXTURE_HOSTILE="patches",
    )
    row = hostile_row(out, "patches")
    assert (row[3], row[4]) == (
        "failed",
        "it changed tensorplug's public API while loading (Tensor.__add__, tp.add, tp.fixture_patched (added)); they "
        "were put back. A plugin changes what an op computes by declaring kernels (tensorplug_kernels) and "
        "gradients, not by patching",
    )
    assert out["values"] == [[3.0], [3.0]]  # the patches add 1.0
    assert out["same"] == [True, True, False]


def test_a_kernel_name_that_is_a_str_subclass_is_used_by_its_characters_not_its_equality() -> None:
    out = run_script(
        """
        result["cube"] = tp.run_kernel("FixtureCube", {"x": tp.tensor([2.0])}).tolist()
        result["stacks"] = [sources("FixtureCube", "numpy"), sources("FixtureSneakyName", "numpy")]
        result["type"] = [type(spec.kernel_name).__name__ for spec in tp.kernel_stack("FixtureSneakyName", "numpy")]

        class Spoof(str):  # a runtime registration, with a name passing for "Add"
            __eq__ = lambda self, other: other == "Add" or str.__eq__(self, other)
            __hash__ = lambda self: hash("Add")

        tp.register_kernel(Spoof("FixtureSpoof"), "numpy", lambda inputs, attrs, backend: inputs["a"])
        result["add"] = [tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist(), sources("Add", "numpy")[-1]]
        result["spoof"] = [type(spec.kernel_name).__name__ for spec in tp.kernel_stack("FixtureSpoof", "numpy")]
        """,
        TP_FIXTURE_HOSTILE="strname",
    )
    assert hostile_row(out, "strname")[3] == "loaded"
    assert out["cube"] == [8.0]  # tensorplug-fixture-good's cube; the spoof would give -8.0
    assert out["stacks"] == [[GOOD], [HOSTILE]]
    assert out["type"] == ["str"]
    assert out["add"] == [[3.0], NUMPY]
    assert out["spoof"] == ["str"]


def test_a_plugin_that_leaves_a_debug_scope_open_fails_and_the_scope_is_left() -> None:
    out = run_script(
        """
        result["log"] = str(tp.log(tp.tensor(-1.0)).item())  # debug mode would raise NonFiniteError here
        try:
            with tp.debug():
                tp.log(tp.tensor(-1.0))
        except tp.NonFiniteError:
            result["debug_still_works"] = True
        result["after"] = str(tp.log(tp.tensor(-1.0)).item())
        """,
        TP_FIXTURE_HOSTILE="debugscope",
    )
    row = hostile_row(out, "debugscope")
    assert (row[3], row[4]) == (
        "failed",
        "it entered a tp.debug scope while loading and left it open; debug mode is the user's to turn on "
        "(tp.debug(), TENSORPLUG_DEBUG=1)",
    )
    assert (out["log"], out.get("debug_still_works"), out["after"]) == ("nan", True, "nan")


# -- names and records -----------------------------------------------------------------------------------------------


def test_a_gradient_declared_for_a_misspelled_kernel_warns_with_a_suggestion() -> None:
    out = run_script(
        """
        result["unknown"] = [p.unknown_gradients for p in tp.plugins() if p.name == "rleu"]
        """,
        TP_FIXTURE_HOSTILE="rleu",
    )
    assert hostile_row(out, "rleu")[3] == "loaded"
    assert about(out, "'Rleu'") == [
        f"tensorplug: plugin 'rleu' from {HOSTILE} {HOSTILE_VERSION} declares a gradient for 'Rleu', which is not a "
        "known kernel (none is registered on any backend); did you mean 'Relu'? As it is, it is never used. If "
        "'Rleu' is a new kernel, declare its KernelSpec too."
    ]
    assert out["unknown"] == [["Rleu"]]
    text = info_command("--brief", TP_FIXTURE_HOSTILE="rleu", PYTHONWARNINGS="ignore").stdout
    assert f"  rleu ({HOSTILE}) declares gradients for Rleu, which no kernel has" in text, text


def test_info_lists_shadowing_that_a_plugin_silenced() -> None:
    out = run_script("", TP_FIXTURE_HOSTILE="silent")
    assert hostile_row(out, "silent")[3] == "loaded"
    assert about(out, "FixtureCube") == about(out, "'Relu'") == []  # silenced: the warnings never show
    data = json.loads(info_command("--json", TP_FIXTURE_HOSTILE="silent").stdout)
    shadowing = [(s["kind"], s["key"], s["by"], s["action"], s["over"]) for s in data["shadowing"]]
    assert shadowing == [
        ("kernel", "('FixtureCube', 'numpy')", HOSTILE, "shadows", GOOD),
        ("gradient", "'Relu'", HOSTILE, "shadows", "tensorplug"),
        ("kernel", "('Add', 'numpy')", NUMPY, "shadows", "tensorplug-fixture-conflict"),
    ]
    text = info_command("--brief", TP_FIXTURE_HOSTILE="silent").stdout
    assert "Shadowed or removed entries (each also warned, whatever the warning filters):" in text
    assert f"  kernel ('FixtureCube', 'numpy'): {HOSTILE} shadows {GOOD}'s" in text
    assert f"  gradient 'Relu': {HOSTILE} shadows tensorplug's" in text
