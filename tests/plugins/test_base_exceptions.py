"""A plugin that raises a BaseException which is not a KeyboardInterrupt (a library's own BaseException subclass,
GeneratorExit) fails alone, like any failing plugin: reported, rolled back, the others loaded; ``import tensorplug``
succeeds. Real installed fixture (tensorplug-fixture-abrupt), one subprocess per test."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest
from test_discovery import ABRUPT, GOOD, NUMPY, STRICT_IMPORT, run_python, run_script

WHO = f"from distribution {ABRUPT} {version(ABRUPT)}"

USE = """
result["backends"] = tp.list_backends()
result["sum"] = tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist()
result["cube"] = tp.run_kernel("FixtureCube", {"x": tp.tensor([2.0])}).tolist()
"""


def row_of(out: dict[str, list[list[str]]], name: str) -> list[str]:
    [row] = [row for row in out["plugins"] if row[1] == ABRUPT and row[0] == name]
    return row


@pytest.mark.parametrize(
    ("plugin", "error"),
    [
        ("baseimport", "importing 'tp_fixture_abrupt.baseimport' raised Abrupt: tp_fixture_abrupt.baseimport stops"),
        ("basehook", "tensorplug_kernels() raised Abrupt: tp_fixture_abrupt.basehook stops its kernel hook"),
        ("genexit", "importing 'tp_fixture_abrupt.genexit' raised GeneratorExit: tp_fixture_abrupt.genexit stops"),
    ],
)
def test_a_plugin_raising_a_base_exception_fails_alone(plugin: str, error: str) -> None:
    out = run_script(USE, TP_FIXTURE_ABRUPT=plugin)
    row = row_of(out, plugin)
    assert row[3] == "failed"
    assert row[4].startswith(error), row[4]
    warned = [w for w in out["plugin_warnings"] if f"plugin {plugin!r} {WHO} failed to load and was rolled back" in w]
    assert len(warned) == 1, out["plugin_warnings"]
    assert "fixture-abrupt" not in out["backends"]  # basehook's backend hook had worked: taken back
    statuses = {(r[0], r[1]): r[3] for r in out["plugins"]}
    assert statuses[("good", GOOD)] == statuses[("numpy", NUMPY)] == "loaded"
    assert (out["sum"], out["cube"]) == ([3.0], [8.0])


def test_all_three_at_once_leave_the_others_working() -> None:
    out = run_script(USE, TP_FIXTURE_ABRUPT="baseimport,basehook,genexit")
    assert [row_of(out, name)[3] for name in ("baseimport", "basehook", "genexit")] == ["failed"] * 3
    assert (out["sum"], out["cube"]) == ([3.0], [8.0])


def test_in_strict_mode_it_is_a_plugin_error_and_leaves_nothing() -> None:
    proc = run_python(STRICT_IMPORT, TENSORPLUG_STRICT_PLUGINS="1", TP_FIXTURE_ABRUPT="basehook")
    out = json.loads(proc.stdout.splitlines()[-1].removeprefix("RESULT "))
    assert out["raised"] is True, proc.stdout + proc.stderr
    assert out["mro"][0] == "PluginError"
    assert f"plugin 'basehook' {WHO} failed to load" in out["message"]
    assert "raised Abrupt: tp_fixture_abrupt.basehook stops its kernel hook" in out["message"]
