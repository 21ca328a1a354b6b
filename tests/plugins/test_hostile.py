"""The promises of the "Security" section of docs/plugins.md, against tensorplug-fixture-hostile really installed.

Each plugin of that distribution misbehaves only when ``TP_FIXTURE_HOSTILE``
names it (see its README); each test turns on the ones it checks, in a
fresh subprocess. The distribution sorts before tensorplug-numpy, so its
plugins load before the real NumPy backend.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from test_discovery import CONFLICT, GOOD, NUMPY, clean_env, run_python, run_script

HOSTILE = "tensorplug-fixture-hostile"
WHO = f"from distribution {HOSTILE} {version(HOSTILE)}"


def hostile_row(out: dict[str, list[list[str]]], name: str) -> list[str]:
    [row] = [row for row in out["plugins"] if row[1] == HOSTILE and row[0] == name]
    return row


def about(out: dict[str, list[str]], fragment: str) -> list[str]:
    return [w for w in out["plugin_warnings"] if fragment in w]


# -- item 6: rollback restores what a failed plugin removed ----------------------------------------------------------


def test_a_failed_plugin_that_unregistered_a_gradient_and_a_kernel_gets_them_back() -> None:
    out = run_script(
        """
        result["relu"] = [spec.source for spec in tp.gradient_stack("Relu")]
        result["cube"] = sources("FixtureCube", "numpy")
        result["grad"] = tp.grad(lambda x: tp.sum(tp.relu(x)))(tp.tensor([-1.0, 2.0])).tolist()
        result["cube_value"] = tp.run_kernel("FixtureCube", {"x": tp.tensor([2.0])}).tolist()
        """,
        TP_FIXTURE_HOSTILE="unregisters",
    )
    row = hostile_row(out, "unregisters")
    assert row[3] == "failed"
    assert "fails after unregistering" in row[4]
    assert out["relu"] == ["tensorplug"]
    assert out["cube"] == [GOOD]
    assert out["grad"] == [0.0, 1.0]
    assert out["cube_value"] == [8.0]


def test_a_plugin_that_leaves_a_gradient_override_scope_open_fails_and_the_scope_is_closed() -> None:
    out = run_script(
        """
        result["grad"] = tp.grad(lambda x: tp.sum(tp.relu(x)))(tp.tensor([-1.0, 2.0])).tolist()
        result["relu"] = tp.get_gradient("Relu").source
        """,
        TP_FIXTURE_HOSTILE="scope",
    )
    row = hostile_row(out, "scope")
    assert row[3] == "failed"
    assert "tp.gradient_overrides / tp.use_gradients or tp.no_grad scope while loading and left it open" in row[4]
    assert out["grad"] == [0.0, 1.0]  # the scope's gradient (dy * 0) would give [0.0, 0.0]
    assert out["relu"] == "tensorplug"


# -- item 7: SystemExit and KeyboardInterrupt ------------------------------------------------------------------------


def test_sys_exit_in_a_hook_fails_that_plugin_only() -> None:
    out = run_script(
        """
        result["backends"] = tp.list_backends()
        result["sum"] = tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist()
        """,
        TP_FIXTURE_HOSTILE="exits",
    )
    row = hostile_row(out, "exits")
    assert row[3] == "failed"
    assert row[4] == "tensorplug_kernels() raised SystemExit: 3"
    assert len(about(out, f"plugin 'exits' {WHO} failed to load and was rolled back")) == 1
    assert "fixture-exits" not in out["backends"]  # its backend hook had worked: taken back
    assert hostile_row(out, "imports")[3] == "loaded"  # the plugins after it still load
    assert out["sum"] == [3.0]


def test_a_keyboard_interrupt_while_a_plugin_imports_propagates_and_importing_again_works() -> None:
    proc = run_python(
        """
        import json, sys, warnings
        warnings.simplefilter("ignore")
        try:
            import tensorplug
        except KeyboardInterrupt:
            interrupted = True
        else:
            interrupted = False
        left = [name for name in ("tensorplug", "tp_fixture_hostile.imports") if name in sys.modules]
        import tensorplug as tp

        print("RESULT " + json.dumps({
            "interrupted": interrupted,
            "left": left,
            "plugins": [[p.name, p.distribution, p.status] for p in tp.plugins()],
            "add": [spec.source for spec in tp.kernel_stack("Add", "numpy")],
            "cube": [spec.source for spec in tp.kernel_stack("FixtureCube", "numpy")],
            "relu": [spec.source for spec in tp.gradient_stack("Relu")],
            "sum": tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist(),
            "grad": tp.grad(lambda x: tp.sum(tp.relu(x)))(tp.tensor([-1.0, 2.0])).tolist(),
        }))
        """,
        TP_FIXTURE_HOSTILE="imports,interrupt",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert out["interrupted"] is True
    assert out["left"] == []  # nothing half-imported: neither tensorplug nor the plugin modules it had imported
    names = [(name, dist) for name, dist, _ in out["plugins"]]
    assert len(names) == len(set(names))  # every plugin once, not once per attempt
    assert [name for name, dist, status in out["plugins"] if status != "loaded" and dist == HOSTILE] == []
    assert ("numpy", NUMPY, "loaded") in [tuple(row) for row in out["plugins"]]
    # The second load ran the plugin that registers while imported again: its entries are there, once.
    assert out["add"] == [CONFLICT, HOSTILE, NUMPY]
    assert out["cube"] == [GOOD, HOSTILE]
    assert out["relu"] == ["tensorplug"]
    assert (out["sum"], out["grad"]) == ([3.0], [0.0, 1.0])


# -- item 8: registrations made while a plugin loads are that plugin's -----------------------------------------------


def test_registering_while_imported_is_attributed_to_the_plugin_and_warns_like_a_declaration() -> None:
    out = run_script(
        """
        result["cube"] = sources("FixtureCube", "numpy")
        result["cube_value"] = tp.run_kernel("FixtureCube", {"x": tp.tensor([2.0])}).tolist()
        result["add"] = sources("Add", "numpy")
        result["sum"] = tp.add(tp.tensor([1.0]), tp.tensor([2.0])).tolist()
        result["sign"] = tp.gradient_stack("Sign")
        info = next(p for p in tp.plugins() if p.name == "imports")
        result["info"] = [info.status, info.kernels, info.gradients]
        """,
        TP_FIXTURE_HOSTILE="imports",
    )
    assert out["info"] == ["loaded", 2, 0]
    # It shadows tensorplug-fixture-good's kernel (loaded before it) with the warning a declaration gives ...
    assert out["cube"] == [GOOD, HOSTILE]
    assert out["cube_value"] == [-8.0]
    cube = about(out, "('FixtureCube', 'numpy')")
    assert cube == [
        f"tensorplug: kernel ('FixtureCube', 'numpy') is registered by both {GOOD} and {HOSTILE}; {HOSTILE} wins "
        "(plugins load in order of distribution name, later ones shadow earlier ones). Exclude one with "
        "TENSORPLUG_PLUGINS to choose."
    ]
    # ... and its Add sits at its rank among the plugins: tensorplug-numpy, loaded later, wins, and says so.
    assert out["add"] == [CONFLICT, HOSTILE, NUMPY]
    assert out["sum"] == [3.0]  # its Add would give 4.0
    assert len(about(out, f"('Add', 'numpy') is registered by both {HOSTILE} and {NUMPY}; {NUMPY} wins")) == 1
    unregistered = about(out, "unregistered the gradient 'Sign'")
    assert unregistered == [
        f"tensorplug: plugin 'imports' from {HOSTILE} {version(HOSTILE)} unregistered the gradient 'Sign' of "
        "tensorplug while loading; it stays unregistered."
    ]
    assert out["sign"] == []


# -- item 9: who owns a backend name ---------------------------------------------------------------------------------


def test_a_distribution_claiming_the_numpy_backend_is_refused_and_numpy_serves_every_op() -> None:
    out = run_script(
        """
        result["backends"] = [[name, tp.backend(name).__class__.__module__] for name in tp.list_backends()
                              if name == "numpy"]
        result["source"] = [spec.source for spec in tp.kernel_stack("Add", "numpy")][-1]
        x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
        result["values"] = [
            tp.add(x, x).tolist(),
            tp.matmul(x, x).tolist(),
            tp.grad(lambda t: tp.sum(tp.exp(t) * t))(tp.tensor([0.0])).tolist(),
        ]
        result["refused"] = [p.refused_backends for p in tp.plugins() if p.name == "squat"]
        """,
        TP_FIXTURE_HOSTILE="squat",
    )
    message = (
        f"backend 'numpy' claimed by {HOSTILE} {version(HOSTILE)} was refused: it belongs to {NUMPY} (the "
        "distribution tensorplug-<name> owns the backend <name>)"
    )
    row = hostile_row(out, "squat")
    assert row[3] == "failed"
    assert row[4].startswith(message)
    assert len(about(out, message)) == 1
    assert out["refused"] == [["numpy"]]
    assert out["backends"] == [["numpy", "tensorplug_numpy._backend"]]
    assert out["source"] == NUMPY
    assert out["values"] == [[[2.0, 4.0], [6.0, 8.0]], [[7.0, 10.0], [15.0, 22.0]], [1.0]]


def info_command(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("tensorplug")
    return subprocess.run(
        [str(script), "info", *args], capture_output=True, text=True, env=clean_env(**variables), timeout=120,
        check=False,
    )  # fmt: skip


def test_info_says_which_backend_claim_was_refused_and_why() -> None:
    refused = f"backend 'numpy' claimed by {HOSTILE} {version(HOSTILE)} was refused: it belongs to {NUMPY}"
    data = json.loads(info_command("--json", TP_FIXTURE_HOSTILE="squat", PYTHONWARNINGS="ignore").stdout)
    [squat] = [p for p in data["plugins"] if p["name"] == "squat"]
    assert (squat["status"], squat["refused_backends"]) == ("failed", ["numpy"])
    assert squat["error"].startswith(refused)
    assert [(b["name"], b["source"]) for b in data["backends"] if b["name"] == "numpy"] == [("numpy", NUMPY)]
    text = info_command("--brief", TP_FIXTURE_HOSTILE="squat", PYTHONWARNINGS="ignore").stdout
    assert any(line.startswith(f"  squat ({HOSTILE}) failed: {refused}") for line in text.splitlines()), text


# -- item 12: a fallback nobody registers ----------------------------------------------------------------------------


def test_a_fallback_that_no_plugin_registers_is_warned_about_shown_by_info_and_named_when_used() -> None:
    out = run_script(
        """
        tp.set_backend("fixture-leaning")
        x = tp.tensor([1.0])
        result["own"] = tp.add(x, x).tolist()
        try:
            tp.sin(x)
        except tp.BackendError as exc:
            result["error"] = str(exc)
        """,
        TP_FIXTURE_HOSTILE="fallback",
    )
    warned = about(out, "falls back to 'fixture-nowhere'")
    assert warned == [
        f"tensorplug: backend 'fixture-leaning' (from {HOSTILE}) falls back to 'fixture-nowhere', which no plugin "
        "registers: a kernel 'fixture-leaning' lacks will fail until a backend 'fixture-nowhere' is registered "
        "(install it, or tp.register_backend('fixture-nowhere', ...))."
    ]
    assert out["own"] == [2.0]
    assert (
        "'fixture-leaning' has no kernel 'Sin' and falls back to 'fixture-nowhere', which is not a registered"
        in (out["error"])
    )
    data = json.loads(info_command("--json", TP_FIXTURE_HOSTILE="fallback", PYTHONWARNINGS="ignore").stdout)
    [leaning] = [b for b in data["backends"] if b["name"] == "fixture-leaning"]
    assert (leaning["fallback"], leaning["fallback_registered"]) == ("fixture-nowhere", False)
    assert all(b["fallback_registered"] for b in data["backends"] if b["name"] != "fixture-leaning")
    text = info_command("--brief", TP_FIXTURE_HOSTILE="fallback", PYTHONWARNINGS="ignore").stdout
    assert "fixture-nowhere (not registered)" in text
    assert "fixture-leaning falls back to 'fixture-nowhere', which is not registered" in text
