"""No leaks: 10 000 gradient calls, plain ones and ones that raise midway, leave no Python memory
behind, no tape and no tensor alive, and the per-thread autodiff state as it was."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from leak_check import assert_no_leak

import tensorplug as tp

CALLS = 10_000


def square(x: tp.Tensor) -> tp.Tensor:
    return x * x


def raises_inside(x: tp.Tensor) -> tp.Tensor:
    y = x * x
    raise ValueError(f"f gave up after computing {y.shape}")


def bad_shapes(x: tp.Tensor) -> tp.Tensor:
    y = x * x
    return tp.matmul(y, tp.ones((4, 4)))  # x is (3,): a ShapeError, with y recorded on the tape


def failing_gradient(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    raise RuntimeError("this gradient fails during backprop")


SINE_FAILS = tp.gradient_overrides({"Sin": failing_gradient})  # one scope object, entered by every call


def gradient_fails(x: tp.Tensor) -> tp.Tensor:
    with SINE_FAILS:
        return tp.sin(x * x)


@tp.custom_grad
def halved(x: tp.Tensor) -> Any:
    return tp.identity(x), lambda dy: dy * 0.5


def nested(x: tp.Tensor) -> tp.Tensor:
    """A second-order gradient through custom_grad: both scopes share one tape."""
    return tp.grad(lambda z: halved(z) * z)(x) * x


def failing_kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    raise ZeroDivisionError("this kernel fails")


def kernel_fails(x: tp.Tensor) -> tp.Tensor:
    return tp.run_kernel("LeakProbe", {"x": x * x})  # type: ignore[return-value]


CASES: dict[str, tuple[Callable[[tp.Tensor], tp.Tensor], type[BaseException] | None, int]] = {
    # case: f, the error a call raises (None: it returns), calls
    "plain": (square, None, CALLS),
    "custom_grad and second order": (nested, None, CALLS // 8),
    "f raises": (raises_inside, ValueError, CALLS // 4),
    "shape error in an op": (bad_shapes, tp.ShapeError, CALLS // 4),
    "a kernel raises": (kernel_fails, tp.KernelError, CALLS // 4),
    "gradient raises in backprop": (gradient_fails, RuntimeError, CALLS // 4),
}


@pytest.fixture
def _leak_probe_kernel() -> Iterator[None]:
    tp.register_kernel("LeakProbe", "numpy", failing_kernel)
    yield
    tp.unregister_kernel("LeakProbe", "numpy")


@pytest.mark.usefixtures("_leak_probe_kernel")
@pytest.mark.parametrize("case", list(CASES))
def test_gradient_calls_leave_nothing_behind(case: str) -> None:
    """10 000 plain grad calls, and fewer of each other kind (most raise midway)."""
    f, error, calls = CASES[case]
    x = tp.tensor([1.0, 2.0, 3.0])
    g = tp.grad(f)

    def call() -> None:
        if error is None:
            g(x)
            return
        try:
            g(x)
        except error:
            return
        raise AssertionError(f"{case}: expected {error.__name__}")

    assert_no_leak(call, calls)
