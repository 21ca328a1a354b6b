"""Each way a plugin can fail, the entry-point names two distributions share, kernels for unregistered backends,
allowlist mistakes, and ``tensorplug info`` in strict mode. Real installed fixtures, one subprocess per test.

- tensorplug-fixture-broken: ``hookraise`` (its kernel hook raises), ``sneaky``
  (registers with ``tp.register_*`` while imported and in a hook, then returns
  a dict), ``typo`` (implements ``tensorplug_kernel``, which is no hook).
- tensorplug-fixture-dupname 0.2.0: ``conflict`` (the name of
  tensorplug-fixture-conflict's plugin; the kernel "FixtureDup", 2 x) and
  ``elsewhere`` ("FixtureElsewhere" for numpy, "fixture" and "fixture-absent").
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

from test_discovery import BROKEN, CONFLICT, DUPNAME, FAILING, GOOD, NUMPY, clean_env, ours, run_python, run_script

WHO = f"from distribution {BROKEN} {version(BROKEN)}"


def rows_by_name(out: dict[str, Any]) -> dict[str, list[Any]]:
    """tp.plugins() rows of tensorplug-fixture-broken, by entry-point name."""
    return {row[0]: row for row in out["plugins"] if row[1] == BROKEN}


def test_a_hook_that_raises_is_reported_once_naming_the_hook_and_rolled_back() -> None:
    out = run_script('result["backends"] = tp.list_backends()')
    row = rows_by_name(out)["hookraise"]
    assert row[3] == "failed"
    assert "tensorplug_kernels() raised ValueError: tp_fixture_broken.hookraise has no kernels today" in row[4]
    warned = [w for w in out["plugin_warnings"] if f"plugin 'hookraise' {WHO}" in w]
    assert len(warned) == 1, out["plugin_warnings"]
    assert row[4] in warned[0]
    assert "fixture-hookraise" not in out["backends"]  # its backend hook had worked: taken back


def test_what_a_failing_plugin_registered_directly_is_rolled_back() -> None:
    out = run_script("""
        result["imported"] = "tp_fixture_broken.sneaky" in sys.modules
        names = ("FixtureSneaky", "FixtureSneakyHook", "FixtureSneakyDeclared")
        result["stacks"] = [sources(name, "numpy") for name in names]
        result["gradient"] = repr(tp.get_gradient("FixtureSneaky"))
        result["backends"] = tp.list_backends()
    """)
    row = rows_by_name(out)["sneaky"]
    assert row[3] == "failed"
    assert "tensorplug_kernels() returned a dict at index 1" in row[4]
    assert out["imported"] is True  # its import-time registrations did run
    assert out["stacks"] == [[], [], []]
    assert out["gradient"] == "None"
    assert out["backends"] == ["numpy", "fixture"]


def test_a_misspelled_hook_fails_the_plugin_with_a_suggestion() -> None:
    out = run_script('result["gradient"] = repr(tp.get_gradient("FixtureTypo"))')
    row = rows_by_name(out)["typo"]
    assert row[3] == "failed"
    assert "'tensorplug_kernel' (did you mean 'tensorplug_kernels'?) is not a tensorplug hook" in row[4]
    assert out["gradient"] == "None"  # its valid gradient hook is not half-applied


def test_every_failing_plugin_leaves_the_others_working() -> None:
    out = run_script("""
        x = tp.tensor([1.0, 2.0])
        result["values"] = [
            tp.add(x, x).tolist(),
            tp.run_kernel("FixtureCube", {"x": x}).tolist(),
            tp.run_kernel("FixtureDup", {"x": x}).tolist(),
            tp.run_kernel("FixtureElsewhere", {"x": x}).tolist(),
            tp.grad(lambda t: tp.sum(tp.run_kernel("FixtureCube", {"x": t})))(x).tolist(),
        ]
    """)
    statuses = {
        (row[0], row[1]): row[3] for row in ours(out["plugins"]) + [r for r in out["plugins"] if r[1] == DUPNAME]
    }
    assert {key for key, status in statuses.items() if status == "failed"} == {(name, BROKEN) for name in FAILING}
    assert out["values"] == [[2.0, 4.0], [1.0, 8.0], [2.0, 4.0], [2.0, 3.0], [3.0, 12.0]]


# -- two distributions, one entry-point name ------------------------------------


def test_two_distributions_with_the_same_entry_point_name_both_load_and_are_reported() -> None:
    out = run_script("""
        result["rows"] = [[p.distribution, p.version, p.status, p.shares_name_with] for p in tp.plugins()
                          if p.name == "conflict"]
        result["dup"] = tp.run_kernel("FixtureDup", {"x": tp.tensor([3.0])}).tolist()
        result["add"] = sources("Add", "numpy")
    """)
    assert out["rows"] == [
        [CONFLICT, version(CONFLICT), "loaded", [DUPNAME]],
        [DUPNAME, version(DUPNAME), "loaded", [CONFLICT]],
    ]
    assert out["dup"] == [6.0]
    assert out["add"] == [CONFLICT, NUMPY]
    shared = [w for w in out["plugin_warnings"] if "plugin name 'conflict'" in w]
    assert len(shared) == 1, out["plugin_warnings"]
    for dist in (CONFLICT, DUPNAME):
        assert f"{dist} {version(dist)}" in shared[0]


def test_a_shared_name_in_the_allowlist_selects_both_and_a_distribution_name_one() -> None:
    code = 'result["loaded"] = sorted([p.name, p.distribution] for p in tp.plugins() if p.status == "loaded")'
    both = run_script(code, TENSORPLUG_PLUGINS="conflict,numpy")
    assert both["loaded"] == [
        ["conflict", CONFLICT],
        ["conflict", DUPNAME],
        ["numpy", NUMPY],
        ["tensorplug", "tensorplug"],
    ]
    assert len([w for w in both["plugin_warnings"] if "plugin name 'conflict'" in w]) == 1
    one = run_script(code, TENSORPLUG_PLUGINS=f"{DUPNAME},numpy")
    assert one["loaded"] == [
        ["conflict", DUPNAME],
        ["elsewhere", DUPNAME],
        ["numpy", NUMPY],
        ["tensorplug", "tensorplug"],
    ]
    assert one["plugin_warnings"] == []  # only one of the two loads: nothing is ambiguous


# -- kernels for a backend nobody registers ---------------------------------------


def test_kernels_for_an_unregistered_backend_are_kept_and_reported_without_a_warning() -> None:
    out = run_script("""
        info = next(p for p in tp.plugins() if p.name == "elsewhere")
        result["elsewhere"] = [info.status, info.kernels, info.unknown_backends]
        result["absent"] = [spec.source for spec in tp.kernels_for_backend("fixture-absent")]
        result["value"] = tp.run_kernel("FixtureElsewhere", {"x": tp.tensor([1.0])}).tolist()
    """)
    # "fixture" is registered by tensorplug-fixture-good, which loads after this plugin: not reported.
    assert out["elsewhere"] == ["loaded", 3, ["fixture-absent"]]
    assert out["absent"] == [DUPNAME]  # kept: a backend "fixture-absent" registered later would run it
    assert out["value"] == [2.0]
    assert [w for w in out["plugin_warnings"] if "fixture-absent" in w] == []


def test_info_shows_kernels_for_an_unregistered_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "tensorplug", "info", "--brief"],
        capture_output=True, text=True, env=clean_env(), timeout=120, check=False,
    )  # fmt: skip
    notes = [line for line in done.stdout.splitlines() if "fixture-absent" in line]
    assert any(line.split()[:2] == ["elsewhere", DUPNAME] for line in notes), done.stdout
    assert any("which no plugin registers" in line for line in notes), done.stdout


# -- the allowlist ------------------------------------------------------------------


def test_an_allowlisted_name_that_matches_nothing_is_reported() -> None:
    out = run_script('result["backends"] = tp.list_backends()', TENSORPLUG_PLUGINS="numpy,nmupy")
    assert out["backends"] == ["numpy"]
    unmatched = [w for w in out["plugin_warnings"] if "'nmupy'" in w]
    assert len(unmatched) == 1, out["plugin_warnings"]
    assert "no installed plugin matches" in unmatched[0]
    assert "numpy (tensorplug-numpy)" in unmatched[0]  # lists what is installed


def test_an_allowlisted_name_that_matches_nothing_is_an_error_in_strict_mode() -> None:
    proc = run_python(
        "import tensorplug",
        TENSORPLUG_PLUGINS="numpy,good,nmupy",
        TENSORPLUG_STRICT_PLUGINS="1",
    )
    assert proc.returncode == 1
    assert "PluginError" in proc.stderr
    assert "'nmupy', which no installed plugin matches" in proc.stderr


def test_an_allowlist_set_but_empty_allows_no_plugin() -> None:
    out = run_script(
        'result["modules"] = sorted(n for n in sys.modules if n.startswith(("tp_fixture_", "tensorplug_numpy")))',
        TENSORPLUG_PLUGINS=" , ",
    )
    assert out["modules"] == []
    assert out["broken_imports"] is None
    assert {row[3] for row in ours(out["plugins"])} == {"blocked"}
    assert all("set, but empty" in row[4] for row in ours(out["plugins"]))


def test_strict_mode_imports_no_blocked_plugin_module() -> None:
    out = run_script(
        'result["modules"] = sorted(n for n in sys.modules if n.startswith(("tp_fixture_", "tensorplug_numpy")))',
        TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD="1",
        TENSORPLUG_STRICT_PLUGINS="1",
    )
    assert out["modules"] == []
    assert out["broken_imports"] is None
    assert out["plugin_warnings"] == []


# -- strict mode and the command line ----------------------------------------------


def command(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run the installed ``tensorplug`` script (it starts outside the package, in _tensorplug_cli)."""
    script = Path(sys.executable).with_name("tensorplug")
    return subprocess.run(
        [str(script), *args], capture_output=True, text=True, env=clean_env(**variables), timeout=120, check=False
    )


def test_info_starts_in_strict_mode_and_shows_every_failure() -> None:
    done = command("info", "--json", TENSORPLUG_STRICT_PLUGINS="1", PYTHONWARNINGS="ignore")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    assert data["strict_error"].startswith("PluginError: ")
    assert "refuses to load" in data["strict_error"]
    assert data["environment"] == {"TENSORPLUG_STRICT_PLUGINS": "1"}
    failed = sorted(p["name"] for p in data["plugins"] if p["status"] == "failed")
    assert failed == sorted(FAILING)
    assert [b["name"] for b in data["backends"]] == ["numpy", "fixture"]
    text = command("info", "--brief", TENSORPLUG_STRICT_PLUGINS="1", PYTHONWARNINGS="ignore")
    assert text.returncode == 1
    assert "strict mode: `import tensorplug` fails with PluginError" in text.stdout
    assert f"{len(FAILING)} plugin(s) failed to load" in text.stdout


def test_info_in_strict_mode_with_nothing_failing_exits_0() -> None:
    done = command("info", "--json", TENSORPLUG_STRICT_PLUGINS="1", TENSORPLUG_PLUGINS=f"numpy,{GOOD}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["strict_error"] is None


def test_other_commands_in_strict_mode_say_why_they_cannot_start() -> None:
    done = command("demo", "--epochs", "1", TENSORPLUG_STRICT_PLUGINS="1")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "import tensorplug failed in strict mode" in done.stderr
    assert "refuses to load" in done.stderr
    assert "tensorplug info" in done.stderr
