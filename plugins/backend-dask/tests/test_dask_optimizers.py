"""Every optimizer of tp.train on the dask backend follows its update rule (the shared optimizer check of
tensorplug.testing, op by op: dask offers no fused updates), across chunk boundaries."""

from __future__ import annotations

import pytest

import tensorplug as tp

CASES = {case.id: case for case in tp.testing.optimizer_cases()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case_id", list(CASES))
def test_dask_passes_the_shared_optimizer_check(case_id: str, dtype: str) -> None:
    assert tp.backend("dask").fused_update(CASES[case_id].fused) is None
    tp.testing.check_optimizer(CASES[case_id], "dask", dtype)
