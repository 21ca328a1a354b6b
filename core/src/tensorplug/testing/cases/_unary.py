"""Conformance cases: unary elementwise kernels."""

from __future__ import annotations

from tensorplug.testing._conformance import Case

CASES: list[Case] = []
