"""A conformance case: one kernel's op on host inputs, with what it must give; and the dtype shorthands the case
tables build their inputs with. The case tables (``tensorplug.testing.cases``) import this module alone."""

from __future__ import annotations

import unittest
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Case", "NotApplicable", "b8", "f32", "f64", "i32", "i64"]


@dataclass(frozen=True)
class Case:
    """One conformance case for one kernel.

    ``inputs`` are host values: numpy arrays become tensors of their dtype
    (build them with :func:`f32`, :func:`i32`, ...); anything else (a Python
    scalar, a list of arrays for list inputs, ...) is passed to ``op`` as is,
    with numpy arrays inside lists converted too. ``expected`` is a numpy
    array whose dtype is the expected result dtype (or a tuple of them for
    ops with several outputs); ``check`` may replace it with a function of
    the result(s) as numpy arrays (random kernels, say). ``raises`` expects
    an exception instead, whose message must match the regex ``match``.
    ``dtypes`` names the dtypes the op uses beyond those of ``inputs`` and
    ``expected`` (a ``dtype=`` argument, say), so that :attr:`needs` is
    complete (``tests/unit/test_conformance.py`` checks it on numpy).
    """

    kernel: str
    op: Callable[..., Any]
    inputs: tuple[Any, ...] = ()
    expected: Any = None
    raises: type[BaseException] | None = None
    match: str | None = None
    check: Callable[..., None] | None = None
    rtol: float = 1e-6
    atol: float = 1e-6
    grad: bool = False
    name: str = ""
    dtypes: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.kernel}-{self.name}" if self.name else self.kernel

    @property
    def needs(self) -> frozenset[str]:
        """Every dtype the case makes a tensor of: its inputs', its expected values', and ``dtypes``."""
        found = set(self.dtypes)
        for array in _arrays((self.inputs, self.expected)):
            found.add(array.dtype.name)
        return frozenset(found)

    @property
    def subnormal_inputs(self) -> bool:
        """Whether a float input holds a subnormal number (which a flush-to-zero backend reads as zero)."""
        return any(_has_subnormal(a) for a in _arrays(self.inputs))


class NotApplicable(unittest.SkipTest):
    """The case does not apply to the backend (a dtype it cannot store, subnormals it flushes); pytest skips it."""


def _arrays(value: Any) -> Iterator[np.ndarray]:
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _arrays(item)


def _has_subnormal(array: np.ndarray) -> bool:
    if array.dtype.kind != "f":
        return False
    magnitude = np.abs(array)
    return bool(np.any((magnitude > 0) & (magnitude < np.finfo(array.dtype).tiny)))


def f32(data: Any) -> np.ndarray:
    return np.array(data, dtype=np.float32)


def f64(data: Any) -> np.ndarray:
    return np.array(data, dtype=np.float64)


def i32(data: Any) -> np.ndarray:
    return np.array(data, dtype=np.int32)


def i64(data: Any) -> np.ndarray:
    return np.array(data, dtype=np.int64)


def b8(data: Any) -> np.ndarray:
    return np.array(data, dtype=np.bool_)
