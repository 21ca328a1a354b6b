"""``tensorplug check array_api`` and ``tp.profile`` with the fallback: the kernels this backend lacks are tested
through numpy, its fallback, and reported as such (as ``tp.coverage()`` lists them); a profile says where they ran."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tensorplug as tp
from catalogue_gaps import decomposed_by_the_core, newer_than_this_backend, through_the_fallback
from tensorplug import kernel_names as K
from tensorplug.kernel_names import CATALOGUE

from tensorplug_array_api.plugin import BACKEND


def test_check_tests_the_fallback_kernels_through_the_fallback(tmp_path: Path) -> None:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TENSORPLUG_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "check", BACKEND, "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    out = done.stdout
    assert ", 0 failed, 0 missing kernels, " in out
    through = sorted(tp.coverage().fallback_for(BACKEND))
    newer = newer_than_this_backend()
    assert K.SOFTSIGN in newer
    assert through == sorted(through_the_fallback())
    assert sorted(tp.coverage().decomposed_for(BACKEND)) == sorted(set(newer) & decomposed_by_the_core())
    listing = " ".join(
        line.strip() for line in out[out.index("  run through the fallback backend numpy") :].splitlines()
    )
    count = len(through)
    assert listing.startswith(
        f"run through the fallback backend numpy, {count} of them passing ({count}): {', '.join(through)}"
    )
    decomposed = sorted(set(newer) & decomposed_by_the_core())
    assert f"run as their decomposition, {len(decomposed)} of them passing ({len(decomposed)}): " in out
    assert f"  kernels: {len(CATALOGUE)} passing, 0 failing, 0 missing" in out


def test_check_takes_known_gaps_from_a_module_given_with_p(tmp_path: Path) -> None:
    (tmp_path / "array_api_gaps.py").write_text(
        textwrap.dedent(
            """
            def pytest_tensorplug_known_gaps(config, backend):
                return {"Erf-float32": "a made-up gap, to see it counted"}
            """
        )
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("TENSORPLUG_", "PYTEST_"))}
    environ["PYTHONPATH"] = str(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tensorplug",
            "check",
            BACKEND,
            "-p",
            "array_api_gaps",
            "-k",
            "Erf-float32 or Add-int32",
        ],
        cwd=tmp_path,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1, done.stdout[-3000:]  # Erf passes: the made-up gap no longer fails
    assert "1 known gap passing (xpass)" in done.stdout
    assert "known gaps that no longer fail (remove them from pytest_tensorplug_known_gaps) (1): Erf-float32" in (
        done.stdout
    )


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_profile_shows_which_backend_ran_a_fallback_kernel() -> None:
    x = tp.tensor([0.25, -1.0])
    p = tp.profile(lambda: tp.erf(x) + x)
    assert [(k.name, k.backend, k.ran_on) for k in p.kernels] == [
        ("Erf", BACKEND, "numpy"),  # no special functions in the array API: numpy ran it
        ("Add", BACKEND, BACKEND),
    ]
    assert f"{BACKEND} (on numpy)" in p.table()
