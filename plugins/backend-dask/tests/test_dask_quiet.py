"""The dask backend is as quiet as the numpy backend: inf - inf, inf * 0 and overflow give inf and NaN without a
RuntimeWarning, in the numpy kernels it maps over each chunk and in dask's own chunked algorithms alike."""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

inf = np.inf
A = [inf, 1.0, -inf, 2.0, 3e38]  # five elements on chunks of two: every kernel spans several chunks
B = [inf, 0.0, -inf, 0.0, 3e38]

CASES: dict[str, Callable[[tp.Tensor, tp.Tensor], tp.Tensor]] = {
    "Sub (per chunk)": lambda a, b: a - b,
    "Multiply (per chunk)": lambda a, b: a * b,
    "Log (per chunk)": lambda a, b: tp.log(b - 1.0),
    "Sum": lambda a, b: tp.sum(tp.concat([a, -b], 0)),
    "AddN": lambda a, b: tp.add_n([a, -b, a]),
    "BatchMatMul": lambda a, b: tp.matmul(tp.reshape(a, (1, 5)), tp.reshape(b, (5, 1))),
    "Einsum": lambda a, b: tp.einsum("i,i->", a, b),
    "Mean": lambda a, b: tp.mean(a - b),
    "Cumsum": lambda a, b: tp.cumsum(tp.concat([a, -b], 0)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_kernels_are_quiet_when_computed(name: str) -> None:
    a, b = tp.tensor(np.array(A, np.float32)), tp.tensor(np.array(B, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = CASES[name](a, b)
        values = out.numpy()
        tp.persist(CASES[name](a, b))
    assert not np.isfinite(values).all()  # inf or NaN, as on numpy


def test_values_equal_the_numpy_backends() -> None:
    results: dict[str, list[Any]] = {}
    for backend in ("dask", "numpy"):
        tp.set_backend(backend)
        a, b = tp.tensor(np.array(A, np.float32)), tp.tensor(np.array(B, np.float32))
        results[backend] = [f(a, b).numpy() for f in CASES.values()]
    for name, got, want in zip(CASES, results["dask"], results["numpy"], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)


def test_tensorplug_check_dask_prints_no_floating_point_warning() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tensorplug", "check", "dask", "-q", "-p", "no:cacheprovider", "-k", "inf or nan"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout
    assert "RuntimeWarning" not in result.stdout + result.stderr
