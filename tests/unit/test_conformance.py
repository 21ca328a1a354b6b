"""The conformance suite of tensorplug.testing, run on the numpy backend, and its completeness."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.testing import Case, all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case(case: Case) -> None:
    run_case(case)


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


def test_every_kernel_has_a_conformance_case() -> None:
    covered = {c.kernel for c in CASES}
    assert [k for k in K.CATALOGUE if k not in covered] == []


def test_every_differentiable_kernel_has_a_second_order_gradient_check() -> None:
    checked = {c.kernel for c in CASES if c.grad}
    differentiable = [k for k in K.CATALOGUE if (spec := tp.get_gradient(k)) is not None and spec.grad is not None]
    assert [k for k in differentiable if k not in checked] == []


def test_coverage_listing_has_no_gaps_for_numpy() -> None:
    listing = tp.coverage()
    assert "numpy" in listing.backends
    assert listing.missing_for("numpy") == []
    assert [r.kernel for r in listing.rows if r.differentiable is None] == []
    assert str(listing).splitlines()[0].split()[:2] == ["kernel", "numpy"]
