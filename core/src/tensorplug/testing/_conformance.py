"""The conformance suite: tables of cases per kernel, run against any backend.

A :class:`Case` calls an op (which dispatches the kernel under test) on host
inputs and compares the result with values worked out independently: by
hand, or from the mathematical definition in float64 — never by calling
the kernel under test. Cases with ``grad=True`` also run
:func:`tensorplug.testing.check_grads` to second order.

The suite tests a backend against the core's contract, whatever else is
installed: cases differentiate with the core's own gradients even where a
gradient plugin (tensorplug-grads-extra, say) overrides some
(:func:`core_gradients`). It also runs what applies to the backend: a
case needing a dtype in ``Backend.unsupported_dtypes`` is not applicable
(:class:`NotApplicable`), except that a gradient case needing only float64
runs in float32 on a backend without float64, with float32 tolerances; on a
``Backend.flush_to_zero`` backend, zero is accepted where a subnormal is
expected, and cases with subnormal inputs are not applicable.
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug.testing._case import Case, NotApplicable, _has_subnormal, b8, f32, f64, i32, i64
from tensorplug.testing._contract import check_contract
from tensorplug.testing._traced import run_traced

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend

__all__ = [
    "Case",
    "NotApplicable",
    "all_cases",
    "b8",
    "cases_by_kernel",
    "check_contract",
    "f32",
    "f64",
    "i32",
    "i64",
    "run_case",
]


def _to_tensors(value: Any) -> Any:
    import tensorplug as tp

    if isinstance(value, np.ndarray):
        return tp.tensor(value)
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        return [tp.tensor(v) for v in value]
    return value


def not_applicable(case: Case, backend: Backend) -> str | None:
    """Why ``case`` does not apply to ``backend`` (None when it does), as :func:`run_case` decides."""
    lacking = sorted(case.needs & backend.unsupported_dtypes)
    if lacking and not (lacking == ["float64"] and _runs_in_float32(case)):
        return f"needs {', '.join(lacking)}, which backend {backend.name!r} does not support (unsupported_dtypes)"
    if backend.flush_to_zero and case.subnormal_inputs:
        return f"has subnormal inputs, which backend {backend.name!r} flushes to zero (flush_to_zero)"
    return None


def _runs_in_float32(case: Case) -> bool:
    """Whether a gradient case needing float64 only for its data can run in float32 instead."""
    return case.grad and case.raises is None and "float64" not in case.dtypes


def in_float32(case: Case) -> Case:
    """``case`` with its float64 inputs and expected values in float32, and float32 tolerances."""

    def down(value: Any) -> Any:
        if isinstance(value, np.ndarray) and value.dtype == np.float64:
            return value.astype(np.float32)
        if isinstance(value, list):
            return [down(v) for v in value]
        if isinstance(value, tuple):
            return tuple(down(v) for v in value)
        return value

    return dataclasses.replace(
        case,
        inputs=down(case.inputs),
        expected=down(case.expected),
        rtol=max(case.rtol, FLOAT32_RTOL),
        atol=max(case.atol, FLOAT32_ATOL),
    )


FLOAT32_RTOL = 1e-5  # a float64 case's values checked in float32 (a gradient case on a backend without float64)
FLOAT32_ATOL = 1e-6


def core_gradient_specs() -> dict[str, Any]:
    """The core's own gradient of every kernel whose active gradient another distribution registered."""
    from tensorplug._runtime._registry import LAYER_BUILTIN, gradient_registry

    specs: dict[str, Any] = {}
    for name, stack in gradient_registry.snapshot().items():
        builtin = [entry.spec for entry in stack if entry.layer == LAYER_BUILTIN]
        if builtin and stack[-1].spec is not builtin[-1]:
            specs[str(name)] = builtin[-1]
    return specs


def overridden_gradients() -> dict[str, str]:
    """Kernel name -> the distribution whose gradient is active instead of the core's (a gradient plugin's)."""
    from tensorplug._runtime._registry import gradient_registry

    result: dict[str, str] = {}
    for name in sorted(core_gradient_specs()):
        active = gradient_registry.get(name)
        if active is not None:
            result[name] = active.source
    return result


@contextlib.contextmanager
def core_gradients() -> Iterator[None]:
    """Inside the block (in this thread), kernels are differentiated with the core's gradients.

    Installed gradient plugins may override some of the core's gradients on
    purpose (tensorplug-grads-extra makes FloorDiv differentiable, say); the
    conformance cases check a backend against the core's, so they run in
    this scope. See :func:`overridden_gradients` for what it sets aside.
    """
    from tensorplug._plugins._overrides import gradient_overrides

    specs = core_gradient_specs()
    if not specs:
        yield
        return
    with gradient_overrides(specs, source="tensorplug (conformance)"):
        yield


def run_case(case: Case, *, gradients: str = "core", traced: bool = False) -> int:
    """Run one case on the active backend; raise AssertionError (naming the case) when it fails.

    Raises :class:`NotApplicable` (a ``unittest.SkipTest``, which pytest
    reports as a skip) when the case needs what the backend declares it
    lacks; a gradient case needing float64 on a backend without it runs in
    float32. ``gradients="core"`` (the default) differentiates with the
    core's gradients, whatever gradient plugins are installed;
    ``gradients="active"`` with the ones in effect. ``traced=True`` runs the
    case eagerly and through ``tp.function`` instead, and checks that the
    replay gives eager's values (see :mod:`tensorplug.testing._traced`): bit for bit, except that a replay
    made by ``Backend.compile`` may differ by the backend's ``compile_ulps``; it then returns the largest
    difference it accepted, in units in the last place (0 otherwise), and fails when the backend still
    defines a method removed from the backend contract (:func:`check_contract`).
    """
    import tensorplug as tp

    if gradients not in ("core", "active"):
        raise ValueError(f"run_case: gradients must be 'core' or 'active', got {gradients!r}")
    backend = tp.backend()
    reason = not_applicable(case, backend)
    if reason is not None:
        raise NotApplicable(f"{case.id}: {reason}")
    if case.needs & backend.unsupported_dtypes:  # a gradient case needing only float64: run it in float32
        case = in_float32(case)
    scope = core_gradients() if gradients == "core" else contextlib.nullcontext()
    with scope:
        if traced:
            return run_traced(case, [_to_tensors(v) for v in case.inputs])
        _run(case, backend)
    return 0


def _run(case: Case, backend: Backend) -> None:
    import tensorplug as tp

    args = [_to_tensors(v) for v in case.inputs]
    if case.raises is not None:
        try:
            out = case.op(*args)
            if backend.lazy:  # a lazy backend checks values (index ranges...) when they are computed: compute them
                for o in out if isinstance(out, list | tuple) else [out]:
                    if isinstance(o, tp.Tensor):
                        o.numpy()
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
            _compare(case, i, o, host, np.asarray(want), backend.flush_to_zero)
    if case.grad:
        tp.testing.check_grads(case.op, args, order=2)


def _compare(case: Case, index: int, out: Any, host: np.ndarray, want: np.ndarray, flush_to_zero: bool) -> None:
    where = f"{case.id} (output {index})"
    if out.dtype != want.dtype.name:
        raise AssertionError(f"{where}: dtype {out.dtype}, expected {want.dtype.name}")
    if tuple(out.shape) != want.shape:
        raise AssertionError(f"{where}: shape {tuple(out.shape)}, expected {want.shape}")
    if flush_to_zero and _has_subnormal(want) and host.shape == want.shape:
        # A flush-to-zero backend gives zero where a subnormal is expected: take that zero as the expected value.
        tiny = np.finfo(want.dtype).tiny
        flushed = (np.abs(want) < tiny) & (want != 0) & (host == 0)
        want = np.where(flushed, host, want)
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
