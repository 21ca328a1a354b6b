"""The conformance suite through tp.function on the torch backend: its lowering's replays equal eager."""

from __future__ import annotations

import pytest

import tensorplug as tp
from tensorplug.testing import Case, all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case_replays_as_eager_on_torch(case: Case) -> None:
    assert tp.get_backend() == "torch"
    run_case(case, traced=True)


def test_the_torch_lowering_calls_torch_directly() -> None:
    """The replay of a small model calls torch's functions, not the kernels (so the suite above tests them)."""
    import inspect

    import torch

    f = tp.function(lambda x, w: tp.sum(tp.tanh(tp.matmul(x, w)) + x[:, :1], axis=1))
    x, w = tp.ones((4, 3)), tp.ones((3, 2))
    f(x, w)
    (entry,) = f._cache.values()
    calls = list(inspect.unwrap(entry.replay).__globals__.values())
    for fn in (torch.matmul, torch.tanh, torch.add, torch.sum):
        assert any(c is fn for c in calls), fn
