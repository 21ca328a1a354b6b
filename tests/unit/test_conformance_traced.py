"""The conformance suite through tp.function on the numpy backend: every replay (lowered) equals eager."""

from __future__ import annotations

import pytest

from tensorplug.testing import Case, all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case_replays_as_eager(case: Case) -> None:
    run_case(case, traced=True)
