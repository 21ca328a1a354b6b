"""The conformance tables, one module per kernel family; ``CASES`` joins them."""

from __future__ import annotations

from tensorplug.testing._conformance import Case
from tensorplug.testing.cases import _composite, _elementwise, _linalg, _nn, _random, _reduction, _shape

CASES: list[Case] = [
    *_elementwise.CASES,
    *_reduction.CASES,
    *_linalg.CASES,
    *_shape.CASES,
    *_nn.CASES,
    *_random.CASES,
    *_composite.CASES,
]
