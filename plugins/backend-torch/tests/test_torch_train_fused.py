"""The torch backend's fused optimizer updates (ApplyGradientDescent, ApplyMomentum, ApplyAdam, ApplyRMSProp,
ApplyAdagrad): each optimizer's
step runs its update, gives the bits of the same step run op by op, and writes none of its inputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug_torch._train import FUSED_UPDATES

OPTIMIZERS: dict[str, tuple[str, Callable[[], tp.train.Optimizer]]] = {
    "SGD": ("ApplyGradientDescent", lambda: tp.train.SGD(0.1)),
    "Momentum": ("ApplyMomentum", lambda: tp.train.Momentum(0.1, 0.9)),
    "Nesterov": ("ApplyMomentum", lambda: tp.train.Momentum(0.1, 0.9, use_nesterov=True)),
    "Adam": ("ApplyAdam", lambda: tp.train.Adam(0.01)),
    "RMSProp": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01)),
    "RMSProp-momentum": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01, momentum=0.9)),
    "RMSProp-centered": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01, centered=True)),
    "RMSProp-centered-momentum": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01, momentum=0.9, centered=True)),
    "Adagrad": ("ApplyAdagrad", lambda: tp.train.Adagrad(0.1)),
}
SHAPES = [(3, 4), (), (5,)]


def variables(dtype: str, prefix: str) -> list[tp.Variable]:
    rng = np.random.default_rng(0)
    return [tp.variable(rng.standard_normal(s).astype(dtype), name=f"{prefix}{i}") for i, s in enumerate(SHAPES)]


def gradients(step: int, dtype: str) -> dict[int, tp.Tensor]:
    rng = np.random.default_rng(step + 1)
    return {i: tp.tensor(rng.standard_normal(s).astype(dtype)) for i, s in enumerate(SHAPES)}


def state_bytes(vs: list[tp.Variable], opt: tp.train.Optimizer) -> list[bytes]:
    return [v.numpy().tobytes() for v in vs] + [w.numpy().tobytes() for _, w in opt.get_weights()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_fused_steps_give_the_ops_bits(kind: str, dtype: str) -> None:
    """Under tp.profile (an observer) a step runs op by op; unobserved, it runs the fused kernel."""
    name, make = OPTIMIZERS[kind]
    assert name in FUSED_UPDATES
    fused_vs, ops_vs = variables(dtype, f"torch-fused-{kind}"), variables(dtype, f"torch-ops-{kind}")
    fused_opt, ops_opt = make(), make()
    for step in range(4):
        grads = gradients(step, dtype)
        fused_opt.apply_gradients({v: grads[i] for i, v in enumerate(fused_vs)})
        profile = tp.profile(lambda: ops_opt.apply_gradients({v: grads[i] for i, v in enumerate(ops_vs)}))  # noqa: B023
        assert "Sub" in profile.kernel_names
    assert state_bytes(fused_vs, fused_opt) == state_bytes(ops_vs, ops_opt)


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_a_step_runs_the_fused_update_and_writes_none_of_its_inputs(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, make = OPTIMIZERS[kind]
    run = FUSED_UPDATES[name]
    calls: list[str] = []

    def counted(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(name)
        return run(inputs, attrs, backend)

    vs = variables("float32", f"torch-inputs-{kind}")
    opt = make()
    opt.apply_gradients({v: g for v, g in zip(vs, gradients(0, "float32").values(), strict=True)})
    monkeypatch.setitem(FUSED_UPDATES, name, counted)
    grads = list(gradients(1, "float32").values())
    shared = [tp.tensor(v) for v in vs] + [tp.tensor(w) for _, w in opt.get_weights()[1:]] + grads
    before = [t.numpy().copy() for t in shared]
    opt.apply_gradients(dict(zip(vs, grads, strict=True)))
    assert calls == [name] * len(vs)
    assert all(np.array_equal(t.numpy(), b) for t, b in zip(shared, before, strict=True))
