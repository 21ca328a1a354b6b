"""Provenance and precedence: who provides each gradient, what it shadows, and how to keep the plugin out.

The subprocess tests start a fresh interpreter, because plugins are
discovered once, when tensorplug is imported, under the environment
variables of that moment. Each script prints one line ``RESULT <json>``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import tensorplug as tp

CORE = "tensorplug"
DIST = "tensorplug-grads-extra"
# kernel -> the function (in tensorplug_grads_extra._safe) that the plugin names lazily
ALWAYS_ON = {
    "Sqrt": "grad_sqrt",
    "Pow": "grad_pow",
    "Log": "grad_log",
    "RealDiv": "grad_real_div",
    "FloorDiv": "grad_floor_div",
}

# Imports tensorplug recording every warning; offers `result` and `report()`.
PRELUDE = """
import json, math, sys, warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tensorplug as tp

result = {
    "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
    "plugins": {p.name: [p.distribution, p.status, p.error] for p in tp.plugins()},
}


def report():
    print("RESULT " + json.dumps(result))


def outcome(compute):
    try:
        return compute()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
"""


def script(body: str) -> str:
    """A script: the prelude, then ``body``."""
    return PRELUDE + body


def result_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, done.stdout + done.stderr
    parsed: dict[str, Any] = json.loads(lines[0][len("RESULT ") :])
    return parsed


@pytest.mark.parametrize("kernel", ALWAYS_ON)
def test_get_gradient_and_the_stack_name_the_distribution(kernel: str) -> None:
    spec = tp.get_gradient(kernel)
    assert spec is not None
    assert (spec.source, spec.override) == (DIST, True)
    assert spec.grad == f"tensorplug_grads_extra._safe:{ALWAYS_ON[kernel]}"
    assert [s.source for s in tp.gradient_stack(kernel)] == [CORE, DIST]


@pytest.mark.parametrize("kernel", ["Sqrt", "Pow", "Log", "RealDiv"])
def test_the_safe_gradients_save_what_the_core_saves(kernel: str) -> None:
    """A bare function in tp.gradient_overrides inherits these; it must see what it would without the package."""
    core, ours = tp.gradient_stack(kernel)
    assert (ours.inputs_to_save, ours.outputs_to_save) == (core.inputs_to_save, core.outputs_to_save)
    with tp.gradient_overrides({"Sqrt": lambda dy, saved, attrs: (dy / (saved[0] * 2.0),)}):
        assert tp.grad(tp.sqrt)(tp.tensor(4.0)).item() == 0.25  # saved[0] is the output, as with the core


@pytest.mark.parametrize("kernel", ALWAYS_ON)
def test_the_coverage_listing_reports_it(kernel: str) -> None:
    listing = tp.coverage()
    row = next(r for r in listing.rows if r.kernel == kernel)
    assert (row.gradient, row.differentiable, row.shadows) == (DIST, True, (CORE,))
    (line,) = [line for line in str(listing).splitlines() if line.startswith(f"{kernel} ")]
    assert line.endswith(f"{DIST}, shadows {CORE}")


def test_kernels_it_does_not_touch_keep_the_core_gradient() -> None:
    for kernel in ("Exp", "Relu", "Round", "Multiply", "Rsqrt"):
        assert [s.source for s in tp.gradient_stack(kernel)] == [CORE]


def test_the_plugin_row() -> None:
    (row,) = [p for p in tp.plugins() if p.distribution == DIST]
    assert (row.name, row.version, row.module, row.status, row.error) == (
        "grads_extra",
        "0.1.0",
        "tensorplug_grads_extra.plugin",
        "loaded",
        None,
    )
    assert row.gradients == len(ALWAYS_ON)
    assert row.gradient_sets == ["straight_through", "guided_backprop", "sigmoid_surrogate", "clip"]


def test_import_is_quiet_and_lazy(run_python: Any) -> None:
    """No warning (override=True), and discovery imports only the plugin module; the rest on first use."""
    code = script("""
loaded = lambda: sorted(m for m in sys.modules if m.startswith("tensorplug_grads_extra"))
result["on import"] = loaded()
tp.grad(tp.sqrt)(tp.tensor(4.0))
result["after a gradient"] = loaded()
tp.use_gradients("straight_through")
result["after a set"] = loaded()
report()
""")
    result = result_of(run_python(code))
    assert result["warnings"] == []
    assert result["on import"] == ["tensorplug_grads_extra", "tensorplug_grads_extra.plugin"]
    assert result["after a gradient"] == sorted([*result["on import"], "tensorplug_grads_extra._safe"])
    assert result["after a set"] == sorted([*result["after a gradient"], "tensorplug_grads_extra._sets"])


CORE_BEHAVIOUR = script("""
result["sqrt'(0)"] = str(tp.grad(tp.sqrt)(tp.tensor(0.0)).item())
result["floor_div"] = outcome(lambda: tp.grad(lambda b: tp.floor_div(tp.tensor(3.0), b))(tp.tensor(2.0)).item())
result["set"] = outcome(lambda: sorted(tp.use_gradients("straight_through").specs))
result["stack"] = [s.source for s in tp.gradient_stack("Sqrt")]
report()
""")


@pytest.mark.parametrize("allowed", ["numpy", "tensorplug-numpy"])
def test_the_allowlist_can_exclude_it(run_python: Any, allowed: str) -> None:
    result = result_of(run_python(CORE_BEHAVIOUR, TENSORPLUG_PLUGINS=allowed))
    assert result["plugins"]["grads_extra"] == [DIST, "blocked", "not named in TENSORPLUG_PLUGINS"]
    assert result["sqrt'(0)"] == "inf"
    assert result["floor_div"].startswith("GradientError: kernel 'FloorDiv' is not differentiable (declared by tens")
    assert result["set"].startswith("RegistrationError: use_gradients('straight_through'): no gradient set")
    assert result["stack"] == [CORE]


@pytest.mark.parametrize("allowed", ["numpy,grads_extra", "numpy,tensorplug_grads_extra"])
def test_the_allowlist_can_name_it(run_python: Any, allowed: str) -> None:
    result = result_of(run_python(CORE_BEHAVIOUR, TENSORPLUG_PLUGINS=allowed))
    assert result["plugins"]["grads_extra"] == [DIST, "loaded", None]
    assert result["sqrt'(0)"] == "0.0"
    assert result["floor_div"] == -0.75
    assert result["set"] == ["Ceil", "Floor", "Round", "Sign", "Step"]
    assert result["stack"] == [CORE, DIST]


# -- two override packages for one kernel -----------------------------------------

RIVAL_PLUGIN = '''
"""A rival override package: Sqrt's gradient is 7 * dy everywhere (easy to recognise)."""

from tensorplug import GradientSpec, hookimpl


def grad_sqrt_seven(dy, saved, attrs):
    return (dy * 7.0,)


@hookimpl
def tensorplug_gradients():
    return [GradientSpec("Sqrt", grad_sqrt_seven, override=True)]
'''


def install_rival(site: Path, distribution: str, package: str) -> None:
    """Lay out what pip would: the package, and a ``.dist-info`` folder declaring its entry point."""
    (site / package).mkdir()
    (site / package / "__init__.py").write_text("")
    (site / package / "plugin.py").write_text(RIVAL_PLUGIN)
    info = site / f"{package}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[tensorplug]\nrival = {package}.plugin\n")


@pytest.mark.parametrize(
    ("rival", "order"),
    [
        ("tensorplug-aaa-rival", "rival first"),  # loads before tensorplug-grads-extra: grads-extra wins
        ("tensorplug-zzz-rival", "rival last"),  # loads after it: the rival wins
    ],
)
def test_two_override_packages_give_one_warning_naming_both_and_the_winner(
    run_python: Any, tmp_path: Path, rival: str, order: str
) -> None:
    install_rival(tmp_path, rival, rival.replace("-", "_"))
    code = script("""
result["sqrt'(4)"] = tp.grad(tp.sqrt)(tp.tensor(4.0)).item()
result["active"] = tp.get_gradient("Sqrt").source
result["stack"] = [s.source for s in tp.gradient_stack("Sqrt")]
report()
""")
    result = result_of(run_python(code, PYTHONPATH=str(tmp_path)))
    first, winner = (rival, DIST) if order == "rival first" else (DIST, rival)
    assert result["plugins"]["rival"] == [rival, "loaded", None]
    assert result["warnings"] == [
        f"PluginWarning: tensorplug: gradient 'Sqrt' is registered by both {first} and {winner}; {winner} wins "
        "(plugins load in order of distribution name, later ones shadow earlier ones). "
        "Exclude one with TENSORPLUG_PLUGINS to choose."
    ]
    assert result["active"] == winner
    assert result["stack"] == [CORE, first, winner]
    assert result["sqrt'(4)"] == (0.25 if winner == DIST else 7.0)
    # the allowlist settles it: keep the rival out and grads-extra is active, quietly
    result = result_of(run_python(code, PYTHONPATH=str(tmp_path), TENSORPLUG_PLUGINS="numpy,grads_extra"))
    assert (result["warnings"], result["active"], result["sqrt'(4)"]) == ([], DIST, 0.25)
