"""The plugin's gradients declare nothing about replay, so eager backprop replays them as it does the core's: the
replayed gradients are bit for bit those its Python gives when it runs as written."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

DIST = "tensorplug-grads-extra"

FUNCTIONS: dict[str, Callable[..., Any]] = {
    "Log": lambda a, b: tp.sum(tp.log(a) * b),
    "Sqrt": lambda a, b: tp.sum(tp.sqrt(a) * b),
    "RealDiv": lambda a, b: tp.sum(a / b),
    "Pow": lambda a, b: tp.sum(tp.pow(a, b)),
    "FloorDiv": lambda a, b: tp.sum(tp.floor_div(a, b) * a),
}


def _grads(f: Callable[..., Any], a: tp.Tensor, b: tp.Tensor) -> list[np.ndarray]:
    return [g.numpy() for g in tp.grads(f)([a, b])]


@pytest.mark.parametrize("kernel", sorted(FUNCTIONS))
def test_a_declared_gradient_is_replayed_and_gives_what_it_gives_as_written(kernel: str) -> None:
    spec = tp.get_gradient(kernel)
    assert spec is not None
    assert (spec.source, spec.replay) == (DIST, True)
    rng = np.random.default_rng(0)
    a = tp.tensor(rng.uniform(0.5, 3.0, (4, 3)).astype(np.float32))
    b = tp.tensor(rng.uniform(0.5, 2.0, (4, 3)).astype(np.float32))
    f = FUNCTIONS[kernel]
    replayed = [_grads(f, a, b) for _ in range(4)]  # traced at the second sighting, replayed after
    with tp.gradient_overrides({kernel: dataclasses.replace(spec, replay=False)}):
        as_written = _grads(f, a, b)
    for got in replayed:
        for g, w in zip(got, as_written, strict=True):
            np.testing.assert_array_equal(g, w)


def test_the_plugin_s_gradient_sets_are_replayed_too() -> None:
    assert {s.name: s.replay for s in tp.gradient_sets() if s.source == DIST} == {
        "clip": True,
        "guided_backprop": True,
        "sigmoid_surrogate": True,
        "straight_through": True,
    }
