"""Testing helpers for users and backend authors: the conformance suite, numeric gradient checks,
``check_contract`` (a backend still defining a method removed from the backend contract fails it, told what
replaced the method), and ``restored_registries``, which undoes a test's registrations (as the pytest fixture
``tensorplug_registries`` does). The exporter conformance kit (``ExportRunner``, ``check_export``,
``check_exports``) runs the same cases through an export format: see ``docs/export.md``, "Testing an exporter".
``check_fused_updates`` checks every optimizer, op by op and through the backend's fused updates, against its
update rule stated once (``optimizer_cases``): see ``docs/authoring.md``, "Fused optimizer updates".
``check_kernel(name, *examples, **attrs)`` checks one kernel (a custom one, say) on every installed backend that
runs it and through every exporter: output dtypes and shapes, inputs left unchanged, its decomposition, its
gradient, replays against eager, a scoped gradient override, the export round trip (a :class:`KernelReport`); see
``docs/authoring.md``, "Checking a kernel".

``check_grads`` compares the analytic gradient (tape autodiff) with central
finite differences in float64, along random directions, as HIPS autograd's
``check_grads`` does; with ``order=2`` it repeats the check on the gradient
itself, so second derivatives are verified too. On a backend without
float64 (``Backend.unsupported_dtypes``) it checks in float32, with a
fourth-order difference and float32 tolerances.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorplug.testing._check_kernel import CHECKS, KernelCheck, KernelReport, check_kernel
from tensorplug.testing._conformance import (
    Case,
    NotApplicable,
    all_cases,
    b8,
    cases_by_kernel,
    check_contract,
    core_gradients,
    f32,
    f64,
    i32,
    i64,
    not_applicable,
    overridden_gradients,
    run_case,
)
from tensorplug.testing._export_kit import (
    EXPORT_OUTCOMES,
    ExportOutcome,
    ExportReport,
    ExportRunner,
    check_export,
    check_exports,
)
from tensorplug.testing._optimizers import OptimizerCase, check_fused_updates, check_optimizer, optimizer_cases
from tensorplug.testing._registries import restored_registries

__all__ = [
    "CHECKS",
    "EXPORT_OUTCOMES",
    "Case",
    "ExportOutcome",
    "ExportReport",
    "ExportRunner",
    "KernelCheck",
    "KernelReport",
    "NotApplicable",
    "OptimizerCase",
    "all_cases",
    "b8",
    "cases_by_kernel",
    "check_contract",
    "check_export",
    "check_exports",
    "check_fused_updates",
    "check_grads",
    "check_kernel",
    "check_optimizer",
    "core_gradients",
    "f32",
    "f64",
    "i32",
    "i64",
    "not_applicable",
    "optimizer_cases",
    "overridden_gradients",
    "restored_registries",
    "run_case",
]

# (eps, rtol, atol) by dtype. float32 uses a fourth-order difference, whose truncation error stays small at a step large
# enough for float32 rounding.
TOLERANCES: dict[str, tuple[float, float, float]] = {"float64": (1e-6, 1e-5, 1e-6), "float32": (1e-2, 1e-2, 1e-3)}


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int = 2,
    *,
    eps: float | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
    dtype: str | None = None,
) -> None:
    """Raise AssertionError if tensorplug's gradients of ``f`` at ``args`` disagree with finite differences.

    Float arguments are cast to ``dtype`` and differentiated; integer and bool
    tensors (indices, masks) and non-tensor arguments are passed through as
    they are. ``f`` may return any float tensor (it is contracted with a
    fixed random tensor to get a scalar). ``dtype`` is float64 by default, or
    float32 on an active backend that lists float64 in its
    ``unsupported_dtypes``; ``eps``, ``rtol`` and ``atol`` default to the
    dtype's (``TOLERANCES``).

    >>> import tensorplug as tp
    >>> tp.testing.check_grads(lambda x: tp.tanh(x) * x, [tp.tensor([0.3, -1.2])], order=2)
    >>> tp.testing.check_grads(lambda x: tp.tanh(x) * x, [tp.tensor([0.3, -1.2])], dtype="float32")
    """
    import tensorplug as tp

    if dtype is None:
        dtype = "float32" if "float64" in tp.backend().unsupported_dtypes else "float64"
    if dtype not in TOLERANCES:
        raise ValueError(f"check_grads: dtype must be float32 or float64, got {dtype!r}")
    default_eps, default_rtol, default_atol = TOLERANCES[dtype]
    eps = default_eps if eps is None else eps
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    rng = np.random.default_rng(seed)
    values = list(args)
    positions = []
    for i, a in enumerate(values):
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            a = a.astype(dtype)  # host data: made in dtype directly (float64 may not exist on the backend)
        if isinstance(a, tp.Tensor | np.ndarray) and tp.tensor(a).dtype in ("float32", "float64"):
            values[i] = tp.cast(tp.tensor(a), dtype)
            positions.append(i)
    if not positions:
        raise ValueError("check_grads: no float argument to differentiate")

    def g(*xs: Any) -> Any:
        full = list(values)
        for i, x in zip(positions, xs, strict=True):
            full[i] = x
        return f(*full)

    g.__name__ = getattr(f, "__name__", "f")
    _check(g, [values[i] for i in positions], order, eps, rtol, atol, rng, tp, dtype)


def _check(
    f: Callable[..., Any],
    xs: list[Any],
    order: int,
    eps: float,
    rtol: float,
    atol: float,
    rng: Any,
    tp: Any,
    dtype: str = "float64",
) -> None:
    probe = f(*xs)
    u = tp.tensor(rng.standard_normal(probe.shape).astype(dtype))

    def scalar(*ys: Any) -> Any:
        return tp.sum(tp.mul(tp.cast(f(*ys), dtype), u))

    analytic = _gradients(scalar, xs, tp)
    directions = [tp.tensor(rng.standard_normal(x.shape).astype(dtype)) for x in xs]

    def at(step: float) -> float:
        value: float = scalar(*[x + d * step for x, d in zip(xs, directions, strict=True)]).item()
        return value

    with tp.no_grad():
        if dtype == "float64":
            numeric = (at(eps) - at(-eps)) / (2 * eps)
        else:  # fourth order: float32's rounding error allows no smaller step
            numeric = (8 * (at(eps) - at(-eps)) - (at(2 * eps) - at(-2 * eps))) / (12 * eps)
    projected = sum(float(np.sum(g.numpy() * d.numpy())) for g, d in zip(analytic, directions, strict=True))
    if not np.isclose(projected, numeric, rtol=rtol, atol=atol):
        shapes = ", ".join(f"{x.dtype}{list(x.shape)}" for x in xs)
        raise AssertionError(
            f"check_grads: analytic and numeric directional derivatives differ for {getattr(f, '__name__', f)!r} "
            f"at inputs {shapes} (order {order} left): analytic {projected!r}, numeric {numeric!r}"
        )
    if order > 1:
        vs = [tp.tensor(rng.standard_normal(x.shape).astype(dtype)) for x in xs]

        def grad_dot(*ys: Any) -> Any:
            gs = _gradients(scalar, list(ys), tp)
            total = tp.sum(tp.mul(gs[0], vs[0]))
            for g, v in zip(gs[1:], vs[1:], strict=True):
                total = total + tp.sum(tp.mul(g, v))
            return total

        grad_dot.__name__ = f"grad_of_{getattr(f, '__name__', 'f')}"
        _check(grad_dot, xs, order - 1, eps, rtol, atol, rng, tp, dtype)


def _gradients(f: Callable[..., Any], xs: list[Any], tp: Any) -> list[Any]:
    """Gradients of scalar ``f`` at ``xs``; zeros where ``f`` does not depend on an input (e.g. linear f's Hessian)."""
    from tensorplug._autodiff._backward import _gradients as gradients

    _, result = gradients(f, xs, None, "check_grads", allow_unconnected=True)
    return [tp.zeros_like(x) if g is None else g for g, x in zip(result, xs, strict=True)]
