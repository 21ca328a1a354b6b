"""The conformance suite: tables of cases per kernel, run against any backend.

A :class:`Case` calls an op (which dispatches the kernel under test) on host
inputs and compares the result with values worked out independently: by
hand, or from the mathematical definition in float64 — never by calling
the kernel under test. Cases with ``grad=True`` also run
:func:`tensorplug.testing.check_grads` to second order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


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

    @property
    def id(self) -> str:
        return f"{self.kernel}-{self.name}" if self.name else self.kernel


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


def _to_tensors(value: Any) -> Any:
    import tensorplug as tp

    if isinstance(value, np.ndarray):
        return tp.tensor(value)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [tp.tensor(v) for v in value]
    return value


def run_case(case: Case) -> None:
    """Run one case on the active backend; raise AssertionError (naming the case) when it fails."""
    import tensorplug as tp

    args = [_to_tensors(v) for v in case.inputs]
    if case.raises is not None:
        try:
            case.op(*args)
        except case.raises as exc:
            if case.match is not None and not re.search(case.match, str(exc)):
                raise AssertionError(f"{case.id}: message {str(exc)!r} does not match {case.match!r}") from exc
            return
        raise AssertionError(f"{case.id}: expected {case.raises.__name__}, but the op returned normally")
    out = case.op(*args)
    outputs = list(out) if isinstance(out, list | tuple) else [out]
    for o in outputs:
        if not isinstance(o, tp.Tensor):
            raise AssertionError(f"{case.id}: the op returned a {type(o).__name__}, not a Tensor")
    hosts = [np.asarray(o.numpy()) for o in outputs]
    if case.check is not None:
        case.check(*hosts)
    else:
        expected = list(case.expected) if isinstance(case.expected, tuple) else [case.expected]
        if len(expected) != len(outputs):
            raise AssertionError(f"{case.id}: {len(outputs)} outputs, expected {len(expected)}")
        for i, (o, host, want) in enumerate(zip(outputs, hosts, expected, strict=True)):
            _compare(case, i, o, host, np.asarray(want))
    if case.grad:
        tp.testing.check_grads(case.op, args, order=2)


def _compare(case: Case, index: int, out: Any, host: np.ndarray, want: np.ndarray) -> None:
    where = f"{case.id} (output {index})"
    if out.dtype != want.dtype.name:
        raise AssertionError(f"{where}: dtype {out.dtype}, expected {want.dtype.name}")
    if tuple(out.shape) != want.shape:
        raise AssertionError(f"{where}: shape {tuple(out.shape)}, expected {want.shape}")
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(host, want, err_msg=where)
    else:
        np.testing.assert_allclose(host, want, rtol=case.rtol, atol=case.atol, equal_nan=True, err_msg=where)


def all_cases() -> list[Case]:
    """Every case of every family table."""
    from tensorplug.testing.cases import CASES

    return list(CASES)


def cases_by_kernel(cases: Sequence[Case] | None = None) -> dict[str, list[Case]]:
    grouped: dict[str, list[Case]] = {}
    for case in all_cases() if cases is None else cases:
        grouped.setdefault(case.kernel, []).append(case)
    return grouped
