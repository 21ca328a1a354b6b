"""The conformance tables, one module per kernel family; ``CASES`` joins them."""

from __future__ import annotations

from tensorplug.testing._conformance import Case
from tensorplug.testing.cases import _binary, _composite, _linalg, _nn, _random, _reduction, _shape, _unary

CASES: list[Case] = [
    *_unary.CASES,
    *_binary.CASES,
    *_reduction.CASES,
    *_linalg.CASES,
    *_shape.CASES,
    *_nn.CASES,
    *_random.CASES,
    *_composite.CASES,
]
