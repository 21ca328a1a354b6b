"""The numpy backend's floating-point policy: no kernel warns. inf - inf, inf * 0, overflow and the like give the
inf and NaN results the kernel contract specifies, quietly, as in TensorFlow.js and PyTorch (``tp.debug`` finds
them); and numpy's own settings (``np.errstate``, ``np.seterr``) outside the kernels are left as they were."""

from __future__ import annotations

import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import Case, all_cases

# Values that make numpy's floating-point checks fire: invalid (inf - inf, inf * 0, 0 / 0), overflow (max + max),
# divide by zero, and ordinary ones between them. Each float input gets them in another rotation, so that every
# pair of them meets in elementwise kernels.
SPECIALS = [np.inf, -np.inf, np.nan, 0.0, -0.0, "max", "-max", 1.0, -1.0, 0.5, "tiny"]


def hostile(array: np.ndarray, shift: int) -> np.ndarray:
    """``array`` (a float one) filled with SPECIALS, starting ``shift`` places in; other arrays as they are."""
    if array.dtype.kind != "f":
        return array
    info = np.finfo(array.dtype)
    named = {"max": info.max, "-max": -info.max, "tiny": info.tiny}
    values = np.array([named.get(v, v) if isinstance(v, str) else v for v in SPECIALS], dtype=array.dtype)
    return np.resize(np.roll(values, -shift), array.shape).astype(array.dtype)


def hostile_inputs(case: Case, shift: int) -> list[Any] | None:
    """The case's inputs as tensors with every float array made hostile; None when it has no float array."""
    found = False
    args: list[Any] = []
    for i, value in enumerate(case.inputs):
        if isinstance(value, np.ndarray):
            found = found or value.dtype.kind == "f"
            args.append(tp.tensor(hostile(value, shift + i)))
        elif isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
            found = found or any(v.dtype.kind == "f" for v in value)
            args.append([tp.tensor(hostile(v, shift + i + j)) for j, v in enumerate(value)])
        else:
            args.append(value)
    return args if found else None


def float_cases() -> Iterator[Case]:
    for case in all_cases():
        if case.raises is None and hostile_inputs(case, 0) is not None:
            yield case


def run_gradient(case: Case, args: list[Any]) -> None:
    """The gradients of ``sum(case.op(*args))`` with respect to its float tensor arguments."""
    floats = [i for i, a in enumerate(args) if isinstance(a, tp.Tensor) and a.dtype.startswith("float")]

    def f(*xs: tp.Tensor) -> tp.Tensor:
        merged = list(args)
        for i, x in zip(floats, xs, strict=True):
            merged[i] = x
        out = case.op(*merged)
        return tp.sum(out[0] if isinstance(out, list | tuple) else out)

    tp.grads(f)([args[i] for i in floats])


def run_hostile(case: Case) -> list[str]:
    """Run ``case.op`` (and its gradient, for a gradient case) on hostile inputs; the warnings raised."""
    caught: list[str] = []
    for shift in range(len(SPECIALS)):
        args = hostile_inputs(case, shift)
        assert args is not None
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                case.op(*args)
                if case.grad:
                    run_gradient(case, args)
            except tp.TensorplugError:
                pass  # an op may refuse such values: only warnings matter here
        caught += [f"{case.id} (shift {shift}): {w.category.__name__}: {w.message}" for w in seen]
    return caught


def test_no_numpy_kernel_warns_on_inf_nan_or_overflow() -> None:
    problems = [p for case in float_cases() for p in run_hostile(case)]
    assert problems == []


@pytest.mark.parametrize(
    ("name", "op"),
    [
        ("inf - inf", lambda a, b: a - b),
        ("inf + -inf", lambda a, b: a + -b),
        ("inf * 0", lambda a, b: a * tp.zeros_like(b)),
        ("Sum of inf and -inf", lambda a, b: tp.sum(tp.concat([a, -b], 0))),
        ("BatchMatMul of inf and 0", lambda a, b: tp.matmul(tp.reshape(a, (1, 2)), tp.zeros((2, 1)))),
        ("overflow", lambda a, b: (a - a + 3e38) * 10.0),
        ("Mean of inf and -inf", lambda a, b: tp.mean(a - b)),
    ],
)
def test_kernels_are_quiet_where_numpy_warns_in_eager_calls_and_replays(name: str, op: Any) -> None:
    a, b = tp.tensor([np.inf, 1.0]), tp.tensor([np.inf, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eager = op(a, b).numpy()
    assert not np.isfinite(eager).all(), name  # the values the contract gives: inf or NaN, not an error
    traced = tp.function(op)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced(a, b)  # the trace (eager kernels)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # replays: the numpy backend lowers them to direct NumPy calls
            np.testing.assert_array_equal(traced(a, b).numpy(), eager)


def test_numpy_settings_outside_kernels_are_left_alone() -> None:
    tp.tensor([np.inf]) - tp.tensor([np.inf])
    before = np.geterr()
    with np.errstate(all="raise"):
        assert np.isnan((tp.tensor([np.inf]) - tp.tensor([np.inf])).numpy()).all()  # the kernel: quiet
        with pytest.raises(FloatingPointError):
            np.subtract(np.array([np.inf]), np.array([np.inf]))  # the user's own NumPy: as the user set it
    assert np.geterr() == before
    with pytest.warns(RuntimeWarning):
        np.subtract(np.array([np.inf]), np.array([np.inf]))


def test_kernels_in_other_threads_are_quiet_too() -> None:
    caught: list[str] = []
    barrier = threading.Barrier(2)

    def work() -> None:
        barrier.wait()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            tp.sum(tp.tensor([np.inf, -np.inf]) * tp.tensor([0.0, 1.0]))
        caught.extend(str(w.message) for w in seen)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert caught == []


def test_tensorplug_check_prints_no_floating_point_warning() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tensorplug", "check", "numpy", "-q", "-p", "no:cacheprovider", "-k", "inf or nan"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout
    assert "RuntimeWarning" not in result.stdout + result.stderr


def test_a_kernel_called_inside_the_quiet_context_runs_in_it() -> None:
    from tensorplug_numpy import _binary
    from tensorplug_numpy._factories import quiet_context

    runner = quiet_context()
    assert runner is not None
    inputs = {"a": np.array([np.inf]), "b": np.array([-np.inf])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = runner.run(_binary.add, inputs, {}, None)  # a context cannot be entered twice: the kernel sees it is in
    assert np.isnan(out).all()


def test_the_numpy_1_runner_is_quiet_too() -> None:
    from tensorplug_numpy._factories import _Errstate  # NumPy 1.x keeps its error settings per thread

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = _Errstate().run(np.subtract, np.array([np.inf]), np.array([np.inf]))
    assert np.isnan(out).all()
