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


def test_a_user_kernel_that_declares_the_function_it_applies_is_called_directly(tensorplug_registries: object) -> None:
    """Decided by what the kernel declares (kernel_factories.unary sets ``applies``), not by who registered it."""
    import inspect

    import torch

    from tensorplug.kernel_factories import unary

    tp.register_kernel("UserTanh", "torch", unary(torch.tanh))
    f = tp.function(lambda x: tp.run_kernel("UserTanh", {"x": x}) * 2.0)
    x = tp.tensor([[-1.0, 0.5], [2.0, 3.0]])
    eager = tp.run_kernel("UserTanh", {"x": x}) * 2.0
    assert f(x).tolist() == eager.tolist()
    assert f(x).tolist() == eager.tolist()
    (entry,) = f._cache.values()
    calls = list(inspect.unwrap(entry.replay).__globals__.values())
    assert any(c is torch.tanh for c in calls)
