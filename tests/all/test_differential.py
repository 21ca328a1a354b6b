"""Differential test: every conformance case, with its float inputs replaced by seeded random values,
gives the same result (values, dtypes, shapes, or the same error class) on numpy and on torch."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import Case, all_cases

CASES = [c for c in all_cases() if c.raises is None]
# Kernels whose outputs are random draws: the two backends' generators differ by design.
RANDOM_KERNELS = {"RandomUniform", "RandomNormal", "dropout"}


def randomised(value: Any, rng: np.random.Generator) -> Any:
    """The same host value with float entries replaced by random ones of the same shape and dtype."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return rng.standard_normal(value.shape).astype(value.dtype)
    if isinstance(value, list):
        return [randomised(v, rng) for v in value]
    return value


def run_on(backend: str, case: Case, inputs: tuple[Any, ...]) -> tuple[str, Any]:
    """('ok', [numpy results]) or ('error', exception class name) for one case on one backend."""
    tp.set_backend(backend)
    args = []
    for v in inputs:
        if isinstance(v, np.ndarray):
            args.append(tp.tensor(v))
        elif isinstance(v, list) and v and all(isinstance(u, np.ndarray) for u in v):
            args.append([tp.tensor(u) for u in v])
        else:
            args.append(v)
    try:
        out = case.op(*args)
    except tp.TensorplugError as exc:
        return "error", type(exc).__name__
    outputs = out if isinstance(out, list | tuple) else [out]
    return "ok", [(o.dtype, o.shape, o.numpy().copy()) for o in outputs]


@pytest.mark.parametrize("case", [c for c in CASES if c.kernel not in RANDOM_KERNELS], ids=lambda c: c.id)
def test_numpy_and_torch_agree(case: Case) -> None:
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    inputs = tuple(randomised(v, rng) for v in case.inputs)
    on_numpy = run_on("numpy", case, inputs)
    on_torch = run_on("torch", case, inputs)
    assert on_numpy[0] == on_torch[0], f"{case.id}: numpy {on_numpy}, torch {on_torch}"
    if on_numpy[0] == "error":
        assert on_numpy[1] == on_torch[1]
        return
    assert len(on_numpy[1]) == len(on_torch[1])
    for (dn, sn, vn), (dt, st, vt) in zip(on_numpy[1], on_torch[1], strict=True):
        assert (dn, sn) == (dt, st), f"{case.id}: numpy {dn}{list(sn)}, torch {dt}{list(st)}"
        if vn.dtype.kind in "biu":
            np.testing.assert_array_equal(vn, vt, err_msg=case.id)
        else:
            tolerance = 1e-4 if vn.dtype == np.float32 else 1e-10
            np.testing.assert_allclose(vn, vt, rtol=tolerance, atol=tolerance, equal_nan=True, err_msg=case.id)


def test_every_kernel_is_compared() -> None:
    compared = {c.kernel for c in CASES if c.kernel not in RANDOM_KERNELS}
    missing = [k for k in tp.kernel_names.CATALOGUE if k not in compared and k not in RANDOM_KERNELS]
    assert missing == []
