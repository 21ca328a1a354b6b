"""tensorplug's conformance suite (values, dtypes, errors, second-order gradients) on the array_api backend.

Kernels the backend lacks run on its fallback, numpy; a case that fails is a
known gap only when it is listed in KNOWN_GAPS with its reason (and in the
README), marked xfail(strict=True) so that fixing it is noticed.
"""

from __future__ import annotations

import pytest
import tensorplug as tp
from catalogue_gaps import decomposed_by_the_core, newer_than_this_backend
from tensorplug import kernel_names as K
from tensorplug.testing import all_cases, run_case

from tensorplug_array_api.plugin import BACKEND, FALLBACK_KERNELS

# case id -> why it fails on this backend (keep the README's "Known gaps" in step). None at present.
KNOWN_GAPS: dict[str, str] = {}

CASES = all_cases()


def _param(case: tp.testing.Case) -> object:
    reason = KNOWN_GAPS.get(case.id)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_conformance_case(case: tp.testing.Case) -> None:
    run_case(case)
    assert tp.get_backend() == BACKEND


def test_known_gaps_name_real_cases() -> None:
    assert sorted(set(KNOWN_GAPS) - {c.id for c in CASES}) == []


# Added to the catalogue after this backend was written (Softsign and later): its modules do not define them, so the
# core's decomposition serves those that have one (as array-API ops), the fallback the others.
NEWER = set(newer_than_this_backend())
DECOMPOSED = decomposed_by_the_core()


def test_native_kernels_are_the_catalogue_less_the_fallback_ones() -> None:
    assert K.SOFTSIGN in NEWER
    native = {spec.kernel_name for spec in tp.kernels_for_backend(BACKEND)}
    assert native | set(FALLBACK_KERNELS) | NEWER == set(K.CATALOGUE)
    assert native & (set(FALLBACK_KERNELS) | NEWER) == set()
    assert len(native) == len(K.CATALOGUE) - 13 - len(
        NEWER
    )  # Erf, Einsum, ScatterNd, UnsortedSegmentSum, 7 conv/pool, 2 random
    assert set(tp.coverage().fallback_for(BACKEND)) == set(FALLBACK_KERNELS) | (NEWER - DECOMPOSED)
    assert set(tp.coverage().decomposed_for(BACKEND)) == NEWER & DECOMPOSED
    assert all(spec.source == "tensorplug-array-api" for spec in tp.kernels_for_backend(BACKEND))


def test_every_kernel_reference_resolves() -> None:
    from tensorplug._runtime._registry import resolve

    for spec in tp.kernels_for_backend(BACKEND):
        assert callable(resolve(spec.kernel, spec.kernel_name)), spec.kernel_name
