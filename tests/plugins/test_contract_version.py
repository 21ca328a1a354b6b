"""The plugin contract's version: a plugin declares the one it was written for (``TENSORPLUG_CONTRACT``), and
discovery refuses another major version, warns once about a newer minor, and loads an undeclared plugin as one
written before the contract had a version. tensorplug-fixture-contract's plugins declare each case when
``TP_FIXTURE_CONTRACT`` names them."""

from __future__ import annotations

from test_discovery import CONTRACT, run_python, run_script

import tensorplug as tp

SCRIPT = """
mine = {p.name: p for p in tp.plugins() if p.distribution == "tensorplug-fixture-contract"}
result["status"] = {name: [p.status, p.contract, p.error] for name, p in mine.items()}
result["sets"] = sorted(s.name for s in tp.gradient_sets() if s.name.startswith("fixture_contract_"))
result["replay"] = {s.name: s.replay for s in tp.gradient_sets() if s.name.startswith("fixture_contract_")}
result["core"] = tp.PLUGIN_CONTRACT
"""


def _run(names: str) -> dict[str, object]:
    return run_script(SCRIPT, TP_FIXTURE_CONTRACT=names)


def test_a_plugin_written_for_another_major_version_is_refused_and_rolled_back() -> None:
    out = _run("future")
    status, contract, error = out["status"]["future"]  # type: ignore[index]
    assert (status, contract) == ("failed", None)
    assert "written for tensorplug's plugin contract 2.0" in error
    assert f"this tensorplug implements contract {tp.PLUGIN_CONTRACT}" in error
    assert "Install a release of the plugin written for contract 1.x" in error
    assert out["sets"] == []  # nothing of it stays registered
    (warning,) = [w for w in out["plugin_warnings"] if "'future'" in w]  # type: ignore[attr-defined]
    assert f"from distribution {CONTRACT} 0.1.0 failed to load and was rolled back" in warning


def test_a_newer_minor_version_loads_with_one_warning() -> None:
    out = _run("newer")
    assert out["status"]["newer"][:2] == ["loaded", "1.9"]  # type: ignore[index]
    assert out["sets"] == ["fixture_contract_newer"]
    assert out["replay"] == {"fixture_contract_newer": True}  # written for 1.1 or later: declared sets replay
    warnings = [w for w in out["plugin_warnings"] if "'newer'" in w]  # type: ignore[attr-defined]
    assert len(warnings) == 1
    assert "written for tensorplug's plugin contract 1.9, newer than the" in warnings[0]
    assert "Upgrade tensorplug to a release implementing contract 1.9" in warnings[0]


def test_an_undeclared_plugin_loads_quietly_and_a_malformed_declaration_is_refused() -> None:
    out = _run("unversioned,malformed")
    assert out["status"]["unversioned"][:2] == ["loaded", None]  # type: ignore[index]
    status, _, error = out["status"]["malformed"]  # type: ignore[index]
    assert status == "failed"
    assert "TENSORPLUG_CONTRACT is 1.1; it is the version of tensorplug's plugin contract" in error
    assert out["sets"] == ["fixture_contract_unversioned"]
    assert out["replay"] == {"fixture_contract_unversioned": False}  # written before 1.1: run as written, as then
    assert not [w for w in out["plugin_warnings"] if "'unversioned'" in w]  # type: ignore[attr-defined]


def test_the_shipped_plugins_declare_the_contract_and_info_shows_it() -> None:
    out = run_script("""result["numpy"] = [p.contract for p in tp.plugins() if p.distribution == "tensorplug-numpy"]""")
    assert out["numpy"] == [tp.PLUGIN_CONTRACT]
    code = "import runpy, sys; sys.argv = ['tensorplug', 'info', '--brief']; runpy.run_module('tensorplug')"
    done = run_python(code, TENSORPLUG_PLUGINS="numpy")  # (the broken fixtures would make info's status 1)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].endswith(f"plugin contract {tp.PLUGIN_CONTRACT}")
    (numpy_row,) = [line.split() for line in lines if line.split()[:2] == ["numpy", "tensorplug-numpy"]]
    assert numpy_row[3] == tp.PLUGIN_CONTRACT  # name, distribution, version, contract, status
