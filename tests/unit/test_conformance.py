"""The conformance suite of tensorplug.testing, run on the numpy backend, and its completeness; what it runs on a
backend without float64 or one that flushes subnormals (tests/float32_backend.py); and that it checks the core's
gradients whatever gradient overrides are registered."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterator
from typing import Any

import float32_backend
import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._observe import KernelCall, observing
from tensorplug.testing import (
    Case,
    NotApplicable,
    all_cases,
    check_grads,
    core_gradients,
    overridden_gradients,
    run_case,
)
from tensorplug.testing._conformance import in_float32

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case(case: Case) -> None:
    run_case(case)


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in CASES]
    assert sorted({i for i in ids if ids.count(i) > 1}) == []


def test_every_kernel_has_a_conformance_case() -> None:
    covered = {c.kernel for c in CASES}
    assert [k for k in K.CATALOGUE if k not in covered] == []


def test_every_differentiable_kernel_has_a_second_order_gradient_check() -> None:
    checked = {c.kernel for c in CASES if c.grad}
    differentiable = [k for k in K.CATALOGUE if (spec := tp.get_gradient(k)) is not None and spec.grad is not None]
    assert [k for k in differentiable if k not in checked] == []


def test_coverage_listing_has_no_gaps_for_numpy() -> None:
    listing = tp.coverage()
    assert "numpy" in listing.backends
    assert listing.missing_for("numpy") == []
    assert [r.kernel for r in listing.rows if r.differentiable is None] == []
    assert str(listing).splitlines()[0].split()[:2] == ["kernel", "numpy"]


# -- what each case needs ------------------------------------------------------------------------------------------


class _Dtypes:
    """A kernel observer collecting every dtype of every kernel call's inputs and outputs."""

    synchronize = False

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def kernel_ran(self, call: KernelCall) -> None:
        backend = call.backend
        for value in call.inputs.values():
            self.seen.update(backend.dtype_of(raw) for raw in (value if isinstance(value, list) else [value]))
        self.seen.update(backend.dtype_of(raw) for raw in call.outputs)


def _dtypes_run(case: Case) -> set[str]:
    recorder = _Dtypes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with observing(recorder):
            run_case(dataclasses.replace(case, grad=False))
    return recorder.seen


def test_each_case_declares_every_dtype_its_op_makes() -> None:
    """Case.needs (inputs, expected values and Case.dtypes, see cases.EXTRA_DTYPES) covers what the case runs."""
    undeclared = {c.id: sorted(_dtypes_run(c) - c.needs) for c in CASES}
    assert {k: v for k, v in undeclared.items() if v} == {}


def test_gradient_cases_run_in_float32_make_no_float64() -> None:
    """What the suite runs in float32 on a backend without float64 makes no float64 tensor of its own."""
    variants = [in_float32(c) for c in CASES if "float64" in c.needs and c.grad and "float64" not in c.dtypes]
    assert len(variants) > 100
    assert [c.id for c in variants if "float64" in _dtypes_run(c)] == []


# -- a backend without float64, and one that flushes subnormals to zero ---------------------------------------------


def _outcomes(backend: str) -> tuple[dict[str, str], dict[str, str]]:
    """Every case on ``backend``: case id -> "passed" / "not applicable" / "failed", and the failures' messages."""
    tp.set_backend(backend)
    outcomes: dict[str, str] = {}
    failures: dict[str, str] = {}
    for case in CASES:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run_case(case)
        except NotApplicable:
            outcomes[case.id] = "not applicable"
        except Exception as exc:
            outcomes[case.id] = "failed"
            failures[case.id] = f"{type(exc).__name__}: {exc}"[:300]
        else:
            outcomes[case.id] = "passed"
    return outcomes, failures


@pytest.fixture
def no_float64() -> Iterator[str]:
    float32_backend.register()
    yield float32_backend.NAME
    tp.set_backend("numpy")
    float32_backend.unregister()


def test_a_backend_without_float64_passes_every_case_that_applies(no_float64: str) -> None:
    outcomes, failures = _outcomes(no_float64)
    assert failures == {}
    inapplicable = {i for i, o in outcomes.items() if o == "not applicable"}
    # Not applicable: exactly the cases needing float64, but for the gradient cases, which run in float32.
    assert inapplicable == {c.id for c in CASES if "float64" in c.needs and not (c.grad and "float64" not in c.dtypes)}
    assert 100 < len(inapplicable) < 200
    passing = {c.kernel for c in CASES if outcomes[c.id] == "passed"}
    assert [k for k in K.CATALOGUE if k not in passing] == []  # every kernel is still tested
    gradient_checks = [c for c in CASES if c.grad and outcomes[c.id] == "passed"]
    assert len(gradient_checks) == sum(1 for c in CASES if c.grad)  # all of them, in float32


def test_a_backend_without_float64_still_has_its_kernel_bugs_caught() -> None:
    def tanh_off(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return np.tanh(inputs["x"]) * np.float32(1.001)  # 0.1 % off

    def sign_of_nothing(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return np.ones_like(inputs["x"])  # Abs's gradient uses Sign: caught by Abs's float32 gradient check

    float32_backend.register(broken={K.TANH: tanh_off, K.SIGN: sign_of_nothing})
    try:
        outcomes, failures = _outcomes(float32_backend.NAME)
    finally:
        tp.set_backend("numpy")
        float32_backend.unregister()
    failed = {i for i, o in outcomes.items() if o == "failed"}
    assert {"Tanh-float32", "Tanh-grad", "Sign-float32", "Abs-grad"} <= failed
    assert outcomes["Add-float32"] == outcomes["Sinh-grad"] == "passed"  # the rest still passes
    assert "check_grads: analytic and numeric directional derivatives differ" in failures["Abs-grad"]
    assert outcomes["Abs-float32"] == "passed"  # only the gradient check sees the broken Sign


def test_check_grads_checks_in_float32_on_a_backend_without_float64(no_float64: str) -> None:
    tp.set_backend(no_float64)
    x = tp.tensor([0.3, -1.2, 2.0])
    check_grads(lambda v: tp.tanh(v) * v, [x], order=2)  # float32, fourth-order differences, float32 tolerances

    @tp.custom_grad
    def off(v: tp.Tensor) -> Any:
        return tp.sin(v), lambda dy: dy * tp.cos(v) * 1.05  # 5 % off

    with pytest.raises(AssertionError, match=r"at inputs float32\[3\]"):
        check_grads(off, [x], order=1)


@pytest.fixture
def flushing() -> Iterator[str]:
    float32_backend.register(float32_backend.FTZ_NAME, flush=True)
    yield float32_backend.FTZ_NAME
    tp.set_backend("numpy")
    float32_backend.unregister(float32_backend.FTZ_NAME)


def test_a_flush_to_zero_backend_gets_zero_where_a_subnormal_is_expected(flushing: str) -> None:
    outcomes, failures = _outcomes(flushing)
    assert failures == {}
    assert outcomes["Multiply-subnormal-result"] == outcomes["Exp-subnormal-result"] == "passed"
    subnormal_inputs = {c.id for c in CASES if c.subnormal_inputs and "float64" not in c.needs}
    assert subnormal_inputs == {"Neg-subnormal"}  # (Step's 5e-324 is float64)
    assert all(outcomes[i] == "not applicable" for i in subnormal_inputs)
    tp.set_backend(flushing)
    assert tp.tensor(np.float32(1e-40)).item() == 0.0  # it does flush


def test_the_same_flushing_backend_fails_when_it_does_not_say_so(flushing: str) -> None:
    backend = tp.backend(flushing)
    type(backend).flush_to_zero = False
    try:
        tp.set_backend(flushing)
        for case_id in ("Multiply-subnormal-result", "Exp-subnormal-result"):
            case = next(c for c in CASES if c.id == case_id)
            with pytest.raises(AssertionError, match=f"{case_id} .output 0."):
                run_case(case)
    finally:
        type(backend).flush_to_zero = True


# -- the core's gradients, whatever overrides are installed -----------------------------------------------------------


@pytest.fixture
def plugin_style_overrides(tensorplug_registries: None) -> None:
    """Overrides like tensorplug-grads-extra's: FloorDiv made differentiable, Sqrt's gradient changed (wrongly)."""
    tp.register_gradient(K.FLOOR_DIV, lambda dy, saved, attrs: (dy, None), override=True)
    tp.register_gradient(K.SQRT, lambda dy, saved, attrs: (dy * 3.0,), override=True)


def test_cases_check_the_core_gradients_whatever_is_overridden(plugin_style_overrides: None) -> None:
    floor_div = next(c for c in CASES if c.id == "FloorDiv-not-differentiable")
    sqrt = next(c for c in CASES if c.id == "Sqrt-grad")
    run_case(floor_div)  # the core's: not differentiable
    run_case(sqrt)  # the core's: 1 / (2 sqrt(x))
    assert overridden_gradients() == {K.FLOOR_DIV: "runtime", K.SQRT: "runtime"}
    with pytest.raises(AssertionError, match="expected GradientError"):
        run_case(floor_div, gradients="active")
    with pytest.raises(AssertionError, match="check_grads"):
        run_case(sqrt, gradients="active")
    assert tp.get_gradient(K.SQRT).source == "runtime"  # the overrides are still in place after the cases


@pytest.mark.usefixtures("tensorplug_registries")
def test_core_gradients_is_a_scope() -> None:
    tp.register_gradient(K.FLOOR_DIV, lambda dy, saved, attrs: (dy, None), override=True)
    x = tp.tensor([3.0, 5.0])
    assert tp.grad(lambda v: tp.sum(tp.floor_div(v, 2.0)))(x).tolist() == [1.0, 1.0]
    with core_gradients(), pytest.raises(tp.GradientError, match="'FloorDiv' is not differentiable"):
        tp.grad(lambda v: tp.sum(tp.floor_div(v, 2.0)))(x)
    assert tp.grad(lambda v: tp.sum(tp.floor_div(v, 2.0)))(x).tolist() == [1.0, 1.0]
    tp.unregister_gradient(K.FLOOR_DIV)
    assert overridden_gradients() == {}
