"""Plugin discovery, isolation, allowlists, strict mode, precedence and lazy imports, with real installed plugins.

Each test runs a fresh ``python -c`` in a subprocess, because discovery
happens once, when tensorplug is imported, and depends on the environment
variables read at that moment. The fixture distributions live in
tests/fixtures (see their READMEs):

- tensorplug-fixture-broken: ``broken`` raises on import (and counts its
  imports in the variable ``TP_FIXTURE_BROKEN_IMPORTS``); ``half`` imports
  but declares an invalid gradient beside a valid backend and kernels;
  ``hookraise``, ``sneaky`` and ``typo`` fail in other ways (test_failures.py).
- tensorplug-fixture-conflict: ``conflict`` registers ("Add", "numpy")
  computing a + b + 1000.
- tensorplug-fixture-dupname: a second ``conflict`` (the kernel
  "FixtureDup") and ``elsewhere`` (test_failures.py).
- tensorplug-fixture-good: ``good`` adds the numpy kernel "FixtureCube"
  with its gradient, and a backend "fixture" with Add and Multiply.
- tensorplug-fixture-hostile: sixteen plugins that misbehave only when
  ``TP_FIXTURE_HOSTILE`` names them (test_hostile.py); quiet here.
- tensorplug-fixture-abrupt: three plugins that raise BaseExceptions only
  when ``TP_FIXTURE_ABRUPT`` names them (test_base_exceptions.py); quiet here.
- tensorplug-fixture-contract: four plugins that declare a plugin contract
  version (another major, a newer minor, none, a malformed one) only when
  ``TP_FIXTURE_CONTRACT`` names them (test_contract_version.py); quiet here.

Each script prints one line ``RESULT <json>`` that the test checks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

ABRUPT = "tensorplug-fixture-abrupt"
BROKEN = "tensorplug-fixture-broken"
CONFLICT = "tensorplug-fixture-conflict"
CONTRACT = "tensorplug-fixture-contract"
DUPNAME = "tensorplug-fixture-dupname"
GOOD = "tensorplug-fixture-good"
GROWN = "tensorplug-fixture-grown"
HOSTILE = "tensorplug-fixture-hostile"
LEGACY = "tensorplug-fixture-legacy"
NUMPY = "tensorplug-numpy"
MARKER = "TP_FIXTURE_BROKEN_IMPORTS"
# The documented order: normalized distribution name, then entry-point name.
FAILING = ("broken", "half", "hookraise", "sneaky", "typo")  # every plugin of tensorplug-fixture-broken
HOSTILE_PLUGINS = (  # every plugin of tensorplug-fixture-hostile, in load order
    *("debugscope", "endless", "exits", "fallback", "imports", "interrupt", "lazy", "patches", "rleu", "scope"),
    *("silent", "squat", "strname", "switches", "thread", "unregisters"),
)
ABRUPT_PLUGINS = ("basehook", "baseimport", "genexit")  # every plugin of tensorplug-fixture-abrupt, in load order
CONTRACT_PLUGINS = ("future", "malformed", "newer", "unversioned")  # tensorplug-fixture-contract's, in load order
FIXTURE_ORDER = [
    *[(name, ABRUPT) for name in ABRUPT_PLUGINS],
    *[(name, BROKEN) for name in FAILING],
    ("conflict", CONFLICT),
    *[(name, CONTRACT) for name in CONTRACT_PLUGINS],
    ("conflict", DUPNAME),
    ("elsewhere", DUPNAME),
    ("good", GOOD),
    ("grown", GROWN),
    *[(name, HOSTILE) for name in HOSTILE_PLUGINS],
    ("legacy", LEGACY),
    ("numpy", NUMPY),
]

# Imports tensorplug recording every warning and the plugin rows; offers `result`, `report()` and `sources()`.
PRELUDE = """
import json, os, sys, warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tensorplug as tp

result = {
    "plugin_warnings": [str(w.message) for w in caught if issubclass(w.category, tp.PluginWarning)],
    "other_warnings": [str(w.message) for w in caught if not issubclass(w.category, tp.PluginWarning)],
    "broken_imports": os.environ.get("TP_FIXTURE_BROKEN_IMPORTS"),
    "plugins": [[p.name, p.distribution, p.version, p.status, p.error] for p in tp.plugins()],
}


def report():
    print("RESULT " + json.dumps(result))


def sources(kernel_name, backend_name):
    return [spec.source for spec in tp.kernel_stack(kernel_name, backend_name)]
"""


def clean_env(**variables: str) -> dict[str, str]:
    """This process's environment without any TENSORPLUG_* or fixture variable, plus ``variables``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("TENSORPLUG_", "TP_FIXTURE_")) and key != "PYTHONWARNINGS"
    }
    env.update(variables)
    return env


def run_python(code: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with this interpreter (``-P``: the working directory is not on sys.path)."""
    return subprocess.run(
        [sys.executable, "-P", "-c", textwrap.dedent(code)],
        env=clean_env(**variables),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def run_script(body: str, **variables: str) -> dict[str, Any]:
    """Run PRELUDE + ``body`` + ``report()`` and return the reported result."""
    proc = run_python(PRELUDE + textwrap.dedent(body) + "\nreport()\n", **variables)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    failure = f"subprocess failed (rc={proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    assert proc.returncode == 0, failure
    assert lines, failure
    result: dict[str, Any] = json.loads(lines[-1].removeprefix("RESULT "))
    return result


def ours(plugins: list[list[Any]]) -> list[list[Any]]:
    """The rows of tp.plugins() that belong to the distributions installed for these tests."""
    names = {dist for _, dist in FIXTURE_ORDER}
    return [row for row in plugins if row[1] in names]


# -- everything installed -----------------------------------------------------


def test_broken_plugin_is_reported_once_and_the_rest_work() -> None:
    out = run_script("""
        result["sum"] = tp.add(tp.tensor([1.0, 2.0]), tp.tensor([10.0, 20.0])).tolist()
    """)
    about_broken = [w for w in out["plugin_warnings"] if "tp_fixture_broken refuses to load" in w]
    assert len(about_broken) == 1, out["plugin_warnings"]
    message = about_broken[0]
    assert BROKEN in message
    assert version(BROKEN) in message
    assert "RuntimeError" in message
    assert out["broken_imports"] == "1"
    assert out["sum"] == [11.0, 22.0]
    assert out["other_warnings"] == []


def test_each_problem_is_warned_exactly_once() -> None:
    out = run_script("")
    warnings = out["plugin_warnings"]
    for name in FAILING:
        about = [w for w in warnings if f"plugin {name!r} from distribution {BROKEN} {version(BROKEN)}" in w]
        assert len(about) == 1, (name, warnings)
    shadowed = [w for w in warnings if "('Add', 'numpy')" in w]
    shared = [w for w in warnings if "plugin name 'conflict'" in w]
    assert (len(shadowed), len(shared)) == (1, 1), warnings
    assert len(warnings) == len(FAILING) + 2, warnings
    assert CONFLICT in shadowed[0]
    assert NUMPY in shadowed[0]


def test_plugins_lists_every_plugin_in_load_order_with_its_status() -> None:
    out = run_script("")
    rows = ours(out["plugins"])
    assert [(row[0], row[1]) for row in rows] == FIXTURE_ORDER
    for name, dist, dist_version, status, error in rows:
        assert dist_version == version(dist), name
        if name in FAILING:
            assert status == "failed", name
            assert error, name
        else:
            assert (status, error) == ("loaded", None), name
    errors = {row[0]: row[4] for row in rows}
    assert "refuses to load" in errors["broken"]
    assert "FixtureHalf" in errors["half"]


def test_good_plugin_kernel_runs_and_its_gradient_works() -> None:
    out = run_script("""
        result["lazy_before"] = "tp_fixture_good._kernels" in sys.modules
        cube = lambda x: tp.run_kernel("FixtureCube", {"x": x})
        x = tp.tensor([1.0, 2.0, -3.0])
        result["value"] = cube(x).tolist()
        result["lazy_after"] = "tp_fixture_good._kernels" in sys.modules
        result["grad"] = tp.grad(cube)(x).tolist()
        result["second"] = tp.grad(lambda x: tp.sum(tp.grad(cube)(x)))(x).tolist()
        result["kernel_source"] = tp.get_kernel("FixtureCube", "numpy").source
        result["gradient_source"] = tp.get_gradient("FixtureCube").source
        result["replay"] = tp.get_gradient("FixtureCube").replay
        result["replayed"] = [tp.grad(lambda x: tp.sum(cube(x)))(x).tolist() for _ in range(4)]
        tp.testing.check_grads(cube, [tp.tensor([0.5, -1.5])], order=2)
    """)
    assert out["lazy_before"] is False
    assert out["lazy_after"] is True
    assert out["value"] == [1.0, 8.0, -27.0]
    assert out["grad"] == [3.0, 12.0, 27.0]
    assert out["second"] == [6.0, 12.0, -18.0]
    assert (out["kernel_source"], out["gradient_source"]) == (GOOD, GOOD)
    assert out["replay"] is False  # the fixture declares no contract version: its gradient runs as written, as then
    assert out["replayed"] == [[3.0, 12.0, 27.0]] * 4


def test_conflicting_kernel_loses_to_the_later_distribution() -> None:
    out = run_script("""
        a, b = tp.tensor([1.0, 2.0]), tp.tensor([10.0, 20.0])
        result["add"] = tp.add(a, b).tolist()
        result["stack"] = sources("Add", "numpy")
        result["active"] = tp.get_kernel("Add", "numpy").source
        tp.unregister_kernel("Add", "numpy", source="tensorplug-numpy")
        result["add_without_numpy"] = tp.add(a, b).tolist()
        result["active_without_numpy"] = tp.get_kernel("Add", "numpy").source
    """)
    assert out["add"] == [11.0, 22.0]
    assert out["stack"] == [CONFLICT, NUMPY]
    assert out["active"] == NUMPY
    # The shadowed kernel is really there: removing numpy's brings the conflicting one (+1000) back.
    assert out["add_without_numpy"] == [1011.0, 1022.0]
    assert out["active_without_numpy"] == CONFLICT
    conflict = [w for w in out["plugin_warnings"] if CONFLICT in w and "'Add'" in w]
    assert len(conflict) == 1, out["plugin_warnings"]
    assert NUMPY in conflict[0]


def test_import_imports_no_heavy_module(tmp_path: Path) -> None:
    # An importable stand-in for torch, so that any `import torch` would show up in sys.modules.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    out = run_script(
        """
        import importlib.util
        heavy = ["torch", "tensorplug_numpy._binary", "tensorplug_numpy._unary", "tensorplug_numpy._nn",
                 "tensorplug_numpy._backend", "tp_fixture_good._kernels", "tp_fixture_good._backend", "safetensors"]
        result["after_import"] = [name for name in heavy if name in sys.modules]
        result["torch_origin"] = importlib.util.find_spec("torch").origin
        tp.add(tp.tensor([1.0]), tp.tensor([2.0]))
        result["after_op"] = [name for name in heavy if name in sys.modules]
        """,
        PYTHONPATH=str(tmp_path),
    )
    assert out["torch_origin"].startswith(str(tmp_path))
    assert out["after_import"] == []
    # The check can see imports: the first op initialises the numpy backend and imports the module of the
    # one kernel it ran (Add), and no other family's.
    assert out["after_op"] == ["tensorplug_numpy._binary", "tensorplug_numpy._backend"]


def test_a_plugins_export_format_is_discovered_and_imported_at_the_first_export(tmp_path: Path) -> None:
    target = tmp_path / "kernels.txt"
    out = run_script(f"""
        result["formats"] = [(s.format, s.source) for s in tp.exporters()]
        result["lazy_before"] = "tp_fixture_good._exporter" in sys.modules
        result["text"] = tp.export(lambda x: tp.exp(x) * 2.0, tp.tensor([1.0]), format="fixture-kernels",
                                   path={str(target)!r})
        result["lazy_after"] = "tp_fixture_good._exporter" in sys.modules
        result["good"] = [p.exporters for p in tp.plugins() if p.name == "good"]
        result["half"] = [p.exporters for p in tp.plugins() if p.name == "half"]
    """)
    formats = dict(out["formats"])
    assert formats["fixture-kernels"] == GOOD
    assert "fixture-half" not in formats  # the failed plugin's format was rolled back with the rest of it
    assert (out["lazy_before"], out["lazy_after"]) == (False, True)
    assert out["text"] == "Exp\nMultiply\n"
    assert target.read_text() == "Exp\nMultiply\n"
    assert out["good"] == [["fixture-kernels"]]
    assert out["half"] == [[]]


def test_third_party_backend_takes_tensors_moved_from_numpy() -> None:
    out = run_script("""
        a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])
        result["before"] = [tp.get_backend(), a.backend, b.backend]
        result["backends"] = tp.list_backends()
        tp.set_backend("fixture")
        fixture = tp.backend("fixture")
        c = a + b
        d = c * c
        result["after"] = [tp.get_backend(), a.backend, b.backend, c.backend, d.backend]
        result["values"] = [c.tolist(), d.tolist()]
        result["moved_in"] = fixture.moved_in
        result["class"] = f"{type(fixture).__module__}.{type(fixture).__qualname__}"
        result["sources"] = [tp.get_kernel("Add", "fixture").source, tp.get_kernel("Multiply", "fixture").source]
        try:
            tp.sub(c, d)
        except tp.KernelNotFoundError as exc:
            result["missing"] = str(exc)
    """)
    assert out["before"] == ["numpy", "numpy", "numpy"]
    assert out["backends"] == ["numpy", "fixture"]  # by priority: numpy 1, fixture -10
    assert out["after"] == ["fixture"] * 5
    assert out["values"] == [[4.0, 6.0], [16.0, 36.0]]
    assert out["moved_in"] == 2
    assert out["class"] == "tp_fixture_good._backend.FixtureBackend"
    assert out["sources"] == [GOOD, GOOD]
    assert "'Sub'" in out["missing"]
    assert "'fixture'" in out["missing"]


def test_failed_plugin_leaves_nothing_registered() -> None:
    out = run_script("""
        result["half"] = [[p.status, p.backends, p.kernels, p.gradients] for p in tp.plugins() if p.name == "half"]
        result["half_imported"] = "tp_fixture_broken.half" in sys.modules
        result["backends"] = tp.list_backends()
        result["stacks"] = [
            sources("FixtureHalf", "numpy"), sources("FixtureHalf", "fixture-half"), sources("Multiply", "numpy")
        ]
        result["for_half_backend"] = [spec.kernel_name for spec in tp.kernels_for_backend("fixture-half")]
        result["gradient"] = repr(tp.get_gradient("FixtureHalf"))
        result["mul"] = tp.mul(tp.tensor([2.0, 3.0]), tp.tensor([4.0, 5.0])).tolist()
        result["active_sources"] = sorted(
            {spec.source for name in tp.list_backends() + ["fixture-half"] for spec in tp.kernels_for_backend(name)}
        )
    """)
    # The module imported, so the failure came from its declarations after the hooks ran.
    assert out["half_imported"] is True
    assert out["half"] == [["failed", [], 0, 0]]
    assert "fixture-half" not in out["backends"]
    assert out["stacks"] == [[], [], [NUMPY]]
    assert out["for_half_backend"] == []
    assert out["gradient"] == "None"
    assert out["mul"] == [8.0, 15.0]
    assert BROKEN not in out["active_sources"]
    assert GOOD in out["active_sources"]


# -- environment variables ----------------------------------------------------


STRICT_IMPORT = """
import json, os

try:
    import tensorplug
except Exception as exc:
    result = {"raised": True, "mro": [cls.__name__ for cls in type(exc).__mro__], "message": str(exc)}
else:
    result = {"raised": False}
result["broken_imports"] = os.environ.get("TP_FIXTURE_BROKEN_IMPORTS")
print("RESULT " + json.dumps(result))
"""


def test_strict_mode_makes_a_load_failure_an_error() -> None:
    proc = run_python(STRICT_IMPORT, TENSORPLUG_STRICT_PLUGINS="1")
    out = json.loads(proc.stdout.splitlines()[-1].removeprefix("RESULT "))
    assert out["raised"] is True, proc.stdout
    assert out["mro"][0] == "PluginError"
    assert "TensorplugError" in out["mro"]
    assert BROKEN in out["message"]
    assert version(BROKEN) in out["message"]
    assert "refuses to load" in out["message"]
    assert out["broken_imports"] == "1"


def test_strict_mode_is_quiet_when_the_failing_plugins_are_not_allowed() -> None:
    out = run_script(
        'result["cube"] = tp.run_kernel("FixtureCube", {"x": tp.tensor([2.0])}).tolist()',
        TENSORPLUG_STRICT_PLUGINS="1",
        TENSORPLUG_PLUGINS="numpy,good",
    )
    assert out["plugin_warnings"] == []
    assert out["broken_imports"] is None
    assert out["cube"] == [8.0]


def test_disable_autoload_loads_no_plugin() -> None:
    out = run_script(
        """
        result["modules"] = sorted(name for name in sys.modules if name.startswith(("tp_fixture_", "tensorplug_numpy")))
        result["backends"] = tp.list_backends()
        result["add_gradient"] = tp.get_gradient("Add").source
        result["errors"] = {}
        for label, first_op in [("tensor", lambda: tp.tensor(1.0)), ("ones", lambda: tp.ones(3))]:
            try:
                first_op()
            except tp.NoBackendError as exc:
                result["errors"][label] = str(exc)
        """,
        TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    assert out["modules"] == []
    assert out["broken_imports"] is None
    assert out["backends"] == []
    assert out["plugin_warnings"] == []
    assert [(row[0], row[1], row[3]) for row in ours(out["plugins"])] == [
        (name, dist, "blocked") for name, dist in FIXTURE_ORDER
    ]
    assert out["add_gradient"] == "tensorplug"  # the core's own gradients still load
    assert set(out["errors"]) == {"tensor", "ones"}
    for message in out["errors"].values():  # not "no backend is installed": it is, and autoload is off
        assert message.startswith(
            "No tensorplug backend is registered: TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD is set, so no plugin was loaded "
            "(installed and not loaded: "
        )
        assert f"numpy ({NUMPY})" in message
        assert "unset TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD" in message
        assert "tp.register_backend(name, factory)" in message


@pytest.mark.parametrize(
    "allowed",
    [
        "numpy,tensorplug-fixture-good",  # entry-point name, distribution name
        "tensorplug-numpy,good",  # distribution name, entry-point name
        "Tensorplug_NumPy,tensorplug.fixture_good",  # distribution names as pip accepts them, unnormalized
        " numpy , good ",  # spaces around names are ignored
    ],
)
def test_allowlist_loads_only_the_named_plugins(allowed: str) -> None:
    out = run_script(
        """
        result["modules"] = sorted(name for name in sys.modules if name.startswith("tp_fixture_"))
        result["backends"] = tp.list_backends()
        result["add"] = [tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist(), sources("Add", "numpy")]
        result["cube"] = tp.run_kernel("FixtureCube", {"x": tp.tensor([2.0])}).tolist()
        """,
        TENSORPLUG_PLUGINS=allowed,
    )
    statuses = {row[0]: row[3] for row in ours(out["plugins"])}
    blocked = (
        *FAILING,
        "conflict",
        "elsewhere",
        "grown",
        "legacy",
        *HOSTILE_PLUGINS,
        *ABRUPT_PLUGINS,
        *CONTRACT_PLUGINS,
    )
    loaded = ("good", "numpy")
    assert statuses == {**dict.fromkeys(blocked, "blocked"), **dict.fromkeys(loaded, "loaded")}
    assert out["broken_imports"] is None
    assert out["modules"] == ["tp_fixture_good", "tp_fixture_good.plugin"]
    assert out["plugin_warnings"] == []
    assert out["backends"] == ["numpy", "fixture"]
    assert out["add"] == [[3.0], [NUMPY]]
    assert out["cube"] == [8.0]


# -- precedence of runtime registrations ---------------------------------------


def test_runtime_kernel_needs_override_shadows_and_unregisters() -> None:
    out = run_script("""
        a, b = tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0])

        def add_runtime(inputs, attrs, backend):
            return inputs["a"] * 100 + inputs["b"]

        try:
            tp.register_kernel("Add", "numpy", add_runtime)
        except tp.RegistrationError as exc:
            result["refused"] = str(exc)
        result["after_refusal"] = [tp.add(a, b).tolist(), sources("Add", "numpy")]
        tp.register_kernel("Add", "numpy", add_runtime, override=True)
        result["overridden"] = [tp.add(a, b).tolist(), sources("Add", "numpy"), tp.get_kernel("Add", "numpy").source]
        result["removed"] = tp.unregister_kernel("Add", "numpy").source
        result["restored"] = [tp.add(a, b).tolist(), sources("Add", "numpy"), tp.get_kernel("Add", "numpy").source]
    """)
    assert NUMPY in out["refused"]
    assert "override=True" in out["refused"]
    assert out["after_refusal"] == [[4.0, 6.0], [CONFLICT, NUMPY]]
    assert out["overridden"] == [[103.0, 204.0], [CONFLICT, NUMPY, "runtime"], "runtime"]
    assert out["removed"] == "runtime"
    assert out["restored"] == [[4.0, 6.0], [CONFLICT, NUMPY], NUMPY]


def test_runtime_gradient_needs_override_shadows_and_unregisters() -> None:
    out = run_script("""
        cube = lambda x: tp.run_kernel("FixtureCube", {"x": x})
        x = tp.tensor([1.0, 2.0])

        def seven_grad(dy, saved, attrs):
            return (dy * 7,)

        try:
            tp.register_gradient("FixtureCube", seven_grad)
        except tp.RegistrationError as exc:
            result["refused"] = str(exc)
        tp.register_gradient("FixtureCube", seven_grad, override=True)
        result["overridden"] = [tp.grad(cube)(x).tolist(), tp.get_gradient("FixtureCube").source]
        result["removed"] = tp.unregister_gradient("FixtureCube").source
        result["restored"] = [tp.grad(cube)(x).tolist(), tp.get_gradient("FixtureCube").source]
    """)
    assert GOOD in out["refused"]
    assert out["overridden"] == [[7.0, 7.0], "runtime"]
    assert out["removed"] == "runtime"
    assert out["restored"] == [[3.0, 12.0], GOOD]


def test_a_second_import_after_a_strict_failure_fails_the_same_way() -> None:
    proc = run_python(
        """
        import json
        messages = []
        for attempt in range(2):
            try:
                import tensorplug
            except Exception as exc:
                messages.append(f"{type(exc).__name__}: {exc}")
        print("RESULT " + json.dumps(messages))
        """,
        TENSORPLUG_STRICT_PLUGINS="1",
    )
    messages = json.loads(proc.stdout.splitlines()[-1].removeprefix("RESULT "))
    assert len(messages) == 2, proc.stdout + proc.stderr
    assert all(m.startswith("PluginError") and "refuses to load" in m for m in messages), messages
    assert "already registered" not in messages[1]


def test_entry_point_reader_agrees_with_importlib_metadata() -> None:
    out = run_script("""
        from importlib.metadata import entry_points as reference
        from tensorplug._plugins._entry_points import entry_points

        result["ours"] = sorted([e.name, e.value, e.distribution, e.version] for e in entry_points("tensorplug"))
        result["reference"] = sorted(
            [e.name, e.value, e.dist.name, e.dist.version] for e in reference(group="tensorplug")
        )
    """)
    assert out["ours"] == out["reference"]
    assert len(out["ours"]) == len(FIXTURE_ORDER)
