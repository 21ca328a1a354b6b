"""The torch backend's fused optimizer updates (ApplyGradientDescent, ApplyMomentum, ApplyAdam, ApplyRMSProp,
ApplyAdagrad) pass the shared optimizer check: every optimizer, op by op and fused, against its update rule; the
fused update called once per variable and step, with the bits of the ops, writing none of its inputs."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug_torch._train import FUSED_UPDATES

CASES = {case.id: case for case in tp.testing.optimizer_cases()}


def test_torch_offers_every_fused_update() -> None:
    assert sorted(FUSED_UPDATES) == sorted(str(update) for update in tp.train.FUSED_UPDATES)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case_id", list(CASES))
def test_torch_passes_the_shared_optimizer_check(case_id: str, dtype: str) -> None:
    tp.testing.check_optimizer(CASES[case_id], "torch", dtype)
