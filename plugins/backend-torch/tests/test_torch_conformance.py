"""The whole conformance suite (values, dtypes, errors, second-order gradients) on the torch backend."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing import Case, all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case_on_torch(case: Case) -> None:
    assert tp.get_backend() == "torch"
    run_case(case)


def test_every_kernel_is_registered_for_torch() -> None:
    listing = tp.coverage()
    assert listing.missing_for("torch") == []
    assert all(s.source == "tensorplug-torch" for s in tp.kernels_for_backend("torch"))
    assert {s.kernel_name for s in tp.kernels_for_backend("torch")} >= set(K.CATALOGUE)
