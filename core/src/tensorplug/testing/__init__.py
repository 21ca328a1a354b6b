"""Testing helpers for users and backend authors: numeric gradient checks.

``check_grads`` compares the analytic gradient (tape autodiff) with central
finite differences in float64, along random directions, as HIPS autograd's
``check_grads`` does; with ``order=2`` it repeats the check on the gradient
itself, so second derivatives are verified too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorplug.testing._conformance import Case, all_cases, b8, cases_by_kernel, f32, f64, i32, i64, run_case

__all__ = ["Case", "all_cases", "b8", "cases_by_kernel", "check_grads", "f32", "f64", "i32", "i64", "run_case"]


def check_grads(
    f: Callable[..., Any],
    args: Sequence[Any],
    order: int = 2,
    *,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-6,
    seed: int = 0,
) -> None:
    """Raise AssertionError if tensorplug's gradients of ``f`` at ``args`` disagree with finite differences.

    Float arguments are cast to float64 and differentiated; integer and bool
    tensors (indices, masks) and non-tensor arguments are passed through as
    they are. ``f`` may return any float tensor (it is contracted with a
    fixed random tensor to get a scalar).

    >>> import tensorplug as tp
    >>> tp.testing.check_grads(lambda x: tp.tanh(x) * x, [tp.tensor([0.3, -1.2])], order=2)
    """
    import tensorplug as tp

    rng = np.random.default_rng(seed)
    values = list(args)
    positions = []
    for i, a in enumerate(values):
        if isinstance(a, tp.Tensor | np.ndarray) and tp.tensor(a).dtype in ("float32", "float64"):
            values[i] = tp.cast(tp.tensor(a), "float64")
            positions.append(i)
    if not positions:
        raise ValueError("check_grads: no float argument to differentiate")

    def g(*xs: Any) -> Any:
        full = list(values)
        for i, x in zip(positions, xs, strict=True):
            full[i] = x
        return f(*full)

    g.__name__ = getattr(f, "__name__", "f")
    _check(g, [values[i] for i in positions], order, eps, rtol, atol, rng, tp)


def _check(
    f: Callable[..., Any], xs: list[Any], order: int, eps: float, rtol: float, atol: float, rng: Any, tp: Any
) -> None:
    probe = f(*xs)
    u = tp.tensor(rng.standard_normal(probe.shape), "float64")

    def scalar(*ys: Any) -> Any:
        return tp.sum(tp.mul(tp.cast(f(*ys), "float64"), u))

    analytic = _gradients(scalar, xs, tp)
    directions = [tp.tensor(rng.standard_normal(x.shape), "float64") for x in xs]
    with tp.no_grad():
        plus = scalar(*[x + d * eps for x, d in zip(xs, directions, strict=True)]).item()
        minus = scalar(*[x - d * eps for x, d in zip(xs, directions, strict=True)]).item()
    numeric = (plus - minus) / (2 * eps)
    projected = sum(float(np.sum(g.numpy() * d.numpy())) for g, d in zip(analytic, directions, strict=True))
    if not np.isclose(projected, numeric, rtol=rtol, atol=atol):
        shapes = ", ".join(f"{x.dtype}{list(x.shape)}" for x in xs)
        raise AssertionError(
            f"check_grads: analytic and numeric directional derivatives differ for {getattr(f, '__name__', f)!r} "
            f"at inputs {shapes} (order {order} left): analytic {projected!r}, numeric {numeric!r}"
        )
    if order > 1:
        vs = [tp.tensor(rng.standard_normal(x.shape), "float64") for x in xs]

        def grad_dot(*ys: Any) -> Any:
            gs = _gradients(scalar, list(ys), tp)
            total = tp.sum(tp.mul(gs[0], vs[0]))
            for g, v in zip(gs[1:], vs[1:], strict=True):
                total = total + tp.sum(tp.mul(g, v))
            return total

        grad_dot.__name__ = f"grad_of_{getattr(f, '__name__', 'f')}"
        _check(grad_dot, xs, order - 1, eps, rtol, atol, rng, tp)


def _gradients(f: Callable[..., Any], xs: list[Any], tp: Any) -> list[Any]:
    """Gradients of scalar ``f`` at ``xs``; zeros where ``f`` does not depend on an input (e.g. linear f's Hessian)."""
    from tensorplug._autodiff import _gradients as gradients

    _, result = gradients(f, xs, None, "check_grads", allow_unconnected=True)
    return [tp.zeros_like(x) if g is None else g for g, x in zip(result, xs, strict=True)]
