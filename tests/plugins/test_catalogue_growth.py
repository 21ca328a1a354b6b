"""A backend built with ``catalogue_kernels`` after the catalogue grew: the kernels it lacks are not registered there.

tensorplug-fixture-grown is written as docs/authoring.md recommends (one
``catalogue_kernels`` call per backend) from modules that define every
catalogue kernel but Erf, Softplus and the random family (it has no
``_random`` module), as a backend written before those joined the catalogue
(Softplus stands for a kernel added with its op and gradient, and no decomposition, after the backend was written:
one with a decomposition would run as its decomposition's ops there). Its three
backends: ``grown`` (no fallback), ``grownfb`` (falls back to numpy) and
``grownrename`` (``Round`` renamed to ``_unary:rnd``, which does not exist: a
typo). Each test runs a fresh interpreter with only this plugin and numpy
allowed; the fixture declares its backends only when ``TP_FIXTURE_GROWN=1``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_discovery import clean_env, run_script

from tensorplug import kernel_names as K

GROWN = "tensorplug-fixture-grown"
ABSENT = [K.ERF, K.SOFTPLUS, K.RANDOM_UNIFORM, K.RANDOM_NORMAL]  # in catalogue order, as tp.coverage() lists them
ENV = {"TP_FIXTURE_GROWN": "1", "TENSORPLUG_PLUGINS": "grown,numpy"}


def grown(body: str) -> dict[str, Any]:
    """``body`` after importing tensorplug with only the grown fixture and numpy loaded; returns ``result``."""
    prelude = """
        def outcome(compute):
            try:
                return compute()
            except Exception as exc:
                return f"{type(exc).__name__}: {exc}"
    """
    return run_script(prelude + body, **ENV)


def command(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=clean_env(**ENV), capture_output=True, text=True, timeout=300
    )


def test_discovery_imports_none_of_its_kernel_modules_and_lists_its_kernels_as_declared() -> None:
    out = grown("""
        result["modules"] = sorted(name for name in sys.modules if name.startswith("tp_fixture_grown"))
        result["missing"] = tp.coverage().missing_for("grown")
        result["plugin"] = [p.status for p in tp.plugins() if p.name == "grown"]
    """)
    assert out["modules"] == ["tp_fixture_grown", "tp_fixture_grown.plugin"]
    assert out["plugin"] == ["loaded"]
    assert out["missing"] == []  # not initialised: listed as declared, checked at first use


def test_once_the_backend_is_used_coverage_lists_the_undefined_kernels_as_missing_or_by_fallback() -> None:
    out = grown("""
        tp.set_backend("grown")
        tp.tensor([1.0]) + 1.0
        cover = tp.coverage()
        result["missing"] = cover.missing_for("grown")
        result["own"] = cover.kernels_for("grown")
        result["erf"] = tp.get_kernel("Erf", "grown") is None
        result["listed"] = len(tp.kernels_for_backend("grown"))
        tp.set_backend("grownfb")
        cover = tp.coverage()
        result["fallback"] = cover.fallback_for("grownfb")
        result["fallback_missing"] = cover.missing_for("grownfb")
        result["cells"] = [row.backends["grownfb"] for row in cover.rows if row.kernel in ("Erf", "Sqrt")]
    """)
    assert out["missing"] == ABSENT
    assert out["own"] == out["listed"] == len(K.CATALOGUE) - len(ABSENT)
    assert out["erf"] is True
    assert out["fallback"] == ABSENT
    assert out["fallback_missing"] == []
    assert out["cells"] == ["fallback:numpy", GROWN]


def test_run_kernel_says_not_registered_naming_the_kernel_the_backend_and_why() -> None:
    out = grown("""
        tp.set_backend("grown")
        x = tp.tensor([0.5])
        result["erf"] = outcome(lambda: tp.erf(x))  # the first use: nothing listed the kernels before
        result["normal"] = outcome(lambda: tp.random_normal((2,)))  # unseeded: the backend's kernel draws
        result["seeded"] = tp.random_normal((2,), seed=1).tolist()  # seeded: drawn on the host, no kernel needed
        tp.set_backend("numpy")
        result["seeded_numpy"] = tp.random_normal((2,), seed=1).tolist()
        tp.set_backend("grown")
        result["direct"] = outcome(lambda: tp.run_kernel("Erf", {"x": x}))
        result["sqrt"] = tp.sqrt(tp.tensor([4.0])).tolist()
    """)
    assert out["erf"].startswith(
        "KernelNotFoundError: No kernel 'Erf' is registered for backend 'grown': tensorplug-fixture-grown names it "
        "tp_fixture_grown._unary:erf by convention (catalogue_kernels), but tp_fixture_grown._unary defines no erf. "
        "Backends that have it: numpy (from tensorplug-numpy). Switch with tp.set_backend('numpy')"
    ), out["erf"]
    assert out["normal"].startswith(
        "KernelNotFoundError: No kernel 'RandomNormal' is registered for backend 'grown': tensorplug-fixture-grown "
        "names it tp_fixture_grown._random:random_normal by convention (catalogue_kernels), but there is no module "
        "tp_fixture_grown._random."
    ), out["normal"]
    assert out["seeded"] == out["seeded_numpy"]
    assert out["direct"] == out["erf"]
    assert out["sqrt"] == [2.0]


def test_the_declared_fallback_serves_the_kernels_the_package_does_not_define() -> None:
    out = grown("""
        tp.set_backend("grownfb")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            erf = tp.erf(tp.tensor([0.5, -1.0]))
            normal = tp.random_normal((3,))  # unseeded: the fallback's kernel draws
            seeded = tp.random_normal((3,), seed=7)  # seeded: drawn on the host, stored here, no kernel
            tp.erf(tp.tensor([0.5]))
        result["erf"] = [erf.backend, erf.tolist()]
        result["normal"] = [normal.backend, list(normal.shape)]
        result["seeded"] = [seeded.backend, seeded.tolist()]
        result["warnings"] = [str(w.message) for w in caught if issubclass(w.category, tp.FallbackWarning)]
        tp.set_backend("numpy")
        result["numpy"] = [tp.erf(tp.tensor([0.5, -1.0])).tolist(), tp.random_normal((3,), seed=7).tolist()]
    """)
    assert out["erf"] == ["grownfb", out["numpy"][0]]
    assert out["normal"] == ["grownfb", [3]]
    assert out["seeded"] == ["grownfb", out["numpy"][1]]
    assert len(out["warnings"]) == 2  # once per kernel
    assert out["warnings"][0].startswith("backend 'grownfb' has no kernel 'Erf'; it runs on the fallback backend")


def test_a_kernel_added_after_the_backend_was_written_is_not_registered_there_and_runs_on_its_fallback(
    tmp_path: Path,
) -> None:
    out = grown("""
        values = [0.5, -3.0]
        tp.set_backend("grown")
        result["grown"] = outcome(lambda: tp.softplus(tp.tensor(values)))
        result["registered"] = tp.get_kernel("Softplus", "grown") is not None
        tp.set_backend("grownfb")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = tp.softplus(tp.tensor(values))
            dx = tp.grad(lambda t: tp.sum(tp.softplus(t)))(tp.tensor(values))
        result["fallback"] = [y.backend, y.tolist(), dx.backend, dx.tolist()]
        result["warned"] = [str(w.message) for w in caught if issubclass(w.category, tp.FallbackWarning)]
        cover = tp.coverage()
        result["missing"] = cover.missing_for("grown")
        result["cells"] = [[row.backends["grown"], row.backends["grownfb"]] for row in cover.rows
                           if row.kernel == "Softplus"]
    """)
    assert out["grown"].startswith(
        "KernelNotFoundError: No kernel 'Softplus' is registered for backend 'grown': tensorplug-fixture-grown names "
        "it tp_fixture_grown._unary:softplus by convention (catalogue_kernels), but tp_fixture_grown._unary defines "
        "no softplus."
    ), out["grown"]
    assert out["registered"] is False
    backend, y, grad_backend, dx = out["fallback"]
    assert (backend, grad_backend) == ("grownfb", "grownfb")
    assert y == pytest.approx([math.log1p(math.exp(0.5)), math.log1p(math.exp(-3.0))], rel=1e-6)
    sigmoid = [1 / (1 + math.exp(-0.5)), 1 / (1 + math.exp(3.0))]
    assert dx == pytest.approx(sigmoid, rel=1e-6)  # the core's gradient rule, on the fallback too
    assert len(out["warned"]) == 1
    assert out["warned"][0].startswith("backend 'grownfb' has no kernel 'Softplus'; it runs on the fallback backend")
    assert K.SOFTPLUS in out["missing"]
    assert out["cells"] == [[None, "fallback:numpy"]]  # not registered on grown; grownfb's fallback serves it
    # Its conformance run counts Softplus's cases as a missing kernel's, not as failures.
    done = command("-m", "pytest", "-p", "no:cacheprovider", "--tensorplug-backend", "grown", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert f"  kernels: {len(K.CATALOGUE) - len(ABSENT)} passing, 0 failing, {len(ABSENT)} missing" in lines
    assert any(line.startswith("  missing kernels") and "Softplus" in line for line in lines), done.stdout[-3000:]


def test_a_typo_in_an_explicit_rename_is_still_an_error() -> None:
    out = grown("""
        tp.set_backend("grownrename")
        result["round"] = outcome(lambda: tp.round(tp.tensor([0.5])))
        result["listed"] = tp.get_kernel("Round", "grownrename").kernel
    """)
    assert out["round"].startswith(
        "KernelError: kernel 'Round' for backend 'grownrename' (from tensorplug-fixture-grown) could not be imported "
        "from 'tp_fixture_grown._unary:rnd': AttributeError:"
    ), out["round"]
    assert out["listed"] == "tp_fixture_grown._unary:rnd"


def test_tensorplug_check_reports_them_missing_not_failing(tmp_path: Path) -> None:
    done = command("-m", "tensorplug", "check", "grown", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    headline = next(line for line in lines if line.startswith("tensorplug conformance (grown): "))
    assert " 0 failed, " in headline
    assert f", {len(ABSENT)} missing kernels, " in headline
    assert f"  kernels: {len(K.CATALOGUE) - len(ABSENT)} passing, 0 failing, {len(ABSENT)} missing" in lines
    assert f"  missing kernels ({len(ABSENT)}): {', '.join(sorted(ABSENT))}" in lines


def test_the_pytest_plugin_runs_them_through_the_fallback(tmp_path: Path) -> None:
    done = command("-m", "pytest", "-p", "no:cacheprovider", "--tensorplug-backend", "grownfb", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    assert f"  kernels: {len(K.CATALOGUE)} passing, 0 failing, 0 missing" in lines
    through = f"run through the fallback backend numpy, {len(ABSENT)} of them passing ({len(ABSENT)}): "
    assert f"  {through}{', '.join(sorted(ABSENT))}" in lines


def test_tensorplug_info_says_which_are_not_defined_once_checked_and_that_it_has_not_checked_otherwise() -> None:
    done = command("-m", "tensorplug", "info", "--init")
    assert done.returncode == 0, done.stderr
    expected = (
        "  grown: not registered, as named by convention (catalogue_kernels) but not defined: Erf "
        "(tp_fixture_grown._unary defines no erf); RandomNormal, RandomUniform (there is no module "
        "tp_fixture_grown._random); Softplus (tp_fixture_grown._unary defines no softplus)"
    )
    assert expected in done.stdout.splitlines()
    erf = next(line.split() for line in done.stdout.splitlines() if line.startswith("  Erf "))
    assert erf[1:5] == ["tensorplug-numpy", "-", "fallback:numpy", "-"]  # numpy, grown, grownfb, grownrename
    data = json.loads(command("-m", "tensorplug", "info", "--init", "--json").stdout)
    assert {(a["backend"], a["kernel"]) for a in data["absent_kernels"]} == {
        (backend, kernel) for backend in ("grown", "grownfb", "grownrename") for kernel in ABSENT
    }
    plain = command("-m", "tensorplug", "info")
    assert "absent" not in plain.stdout
    assert "not defined" not in plain.stdout
    assert (
        "  (numpy, grown, grownfb, grownrename: not initialised, so the kernels catalogue_kernels names there are "
        "listed as declared; `tensorplug info --init` checks that each is defined)"
    ) in plain.stdout.splitlines()
