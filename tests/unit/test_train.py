"""tp.train: each optimizer against its update rule (``tensorplug.testing.optimizer_cases``), minimize on
a least-squares problem, which variables are trained, per-variable state and its release, and errors."""

from __future__ import annotations

import gc
import itertools
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.train import OptimizerError

_names = itertools.count()


def unique(prefix: str) -> str:
    """A variable name no other live variable has (minimize with var_list=None sees every live variable)."""
    return f"test_train/{prefix}{next(_names)}"


# -- the reference: each optimizer's update rule, stated once in tensorplug.testing ------------------------------

CASES = {case.id: case for case in tp.testing.optimizer_cases()}
TOLERANCES = {"float64": {"rtol": 1e-11, "atol": 1e-13}, "float32": {"rtol": 2e-5, "atol": 2e-6}}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case_id", list(CASES))
def test_apply_gradients_follows_the_update_rule(case_id: str, dtype: str) -> None:
    case = CASES[case_id]
    rng = np.random.default_rng(7)
    initial = [rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal(5).astype(dtype)]
    steps = [[rng.standard_normal(w.shape).astype(dtype) for w in initial] for _ in range(6)]
    variables = [tp.variable(w, name=unique("w")) for w in initial]
    optimizer = case.make()
    for t, grads in enumerate(steps, start=1):
        # one variable keyed by name (as tp.variable_grads gives), the other by the Variable itself
        optimizer.apply_gradients({variables[0].name: tp.tensor(grads[0]), variables[1]: tp.tensor(grads[1])})
        assert optimizer.iterations == t
    expected = [case.start(w) for w in initial]
    for t, grads in enumerate(steps, start=1):
        expected = [case.step(s, g, t) for s, g in zip(expected, grads, strict=True)]
    for variable, want, start in zip(variables, expected, initial, strict=True):
        assert variable.dtype == dtype
        np.testing.assert_allclose(variable.numpy(), want["var"], **TOLERANCES[dtype])
        assert not np.allclose(variable.numpy(), start)  # it did move


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case_id", list(CASES))
def test_minimize_follows_the_update_rule(case_id: str, dtype: str) -> None:
    case = CASES[case_id]
    # loss = sum(a * w**2 + b * w) per variable, so the gradient is 2 * a * w + b, a function of w
    rng = np.random.default_rng(11)
    shapes = [(4, 2), (3,)]
    a = [rng.uniform(0.5, 2.0, s).astype(dtype) for s in shapes]
    b = [rng.standard_normal(s).astype(dtype) for s in shapes]
    initial = [rng.standard_normal(s).astype(dtype) for s in shapes]
    variables = [tp.variable(w, name=unique("w")) for w in initial]
    a_t, b_t = [tp.tensor(x) for x in a], [tp.tensor(x) for x in b]

    def loss() -> tp.Tensor:
        terms = [tp.sum(ai * w * w + bi * w) for ai, bi, w in zip(a_t, b_t, variables, strict=True)]
        return terms[0] + terms[1]

    optimizer = case.make()
    expected = [case.start(w) for w in initial]
    for t in range(1, 6):
        ws = [state["var"] for state in expected]
        want_loss = sum(float(np.sum(ai * w * w + bi * w)) for ai, bi, w in zip(a, b, ws, strict=True))
        value = optimizer.minimize(loss, variables)
        assert value.shape == ()
        np.testing.assert_allclose(value.item(), want_loss, **TOLERANCES[dtype])
        grads = [2 * ai.astype(np.float64) * w + bi for ai, bi, w in zip(a, b, ws, strict=True)]
        expected = [case.step(state, g, t) for state, g in zip(expected, grads, strict=True)]
    for variable, want in zip(variables, expected, strict=True):
        np.testing.assert_allclose(variable.numpy(), want["var"], **TOLERANCES[dtype])


def test_defaults_are_tfjs_defaults() -> None:
    # tf.train.adam(0.001, 0.9, 0.999, backend epsilon 1e-7), rmsprop(lr, .9, 0.0, 1e-7, false),
    # adagrad(lr, 0.1), momentum(lr, m, false)
    assert tp.train.Adam().get_config() == {"learning_rate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-7}
    assert tp.train.RMSProp(0.1).get_config() == {
        "learning_rate": 0.1,
        "decay": 0.9,
        "momentum": 0.0,
        "epsilon": 1e-7,
        "centered": False,
    }
    assert tp.train.Adagrad(0.1).get_config() == {"learning_rate": 0.1, "initial_accumulator_value": 0.1}
    assert tp.train.Momentum(0.1, 0.5).get_config() == {"learning_rate": 0.1, "momentum": 0.5, "use_nesterov": False}


def test_reprs_show_hyper_parameters() -> None:
    assert repr(tp.train.SGD(0.5)) == "SGD(learning_rate=0.5)"
    assert repr(tp.train.Momentum(0.1, 0.9, use_nesterov=True)) == (
        "Momentum(learning_rate=0.1, momentum=0.9, use_nesterov=True)"
    )
    assert repr(tp.train.Adam()) == "Adam(learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-07)"
    assert repr(tp.train.RMSProp(0.01, momentum=0.5)) == (
        "RMSProp(learning_rate=0.01, decay=0.9, momentum=0.5, epsilon=1e-07, centered=False)"
    )
    assert repr(tp.train.Adagrad(1, 0.25)) == "Adagrad(learning_rate=1.0, initial_accumulator_value=0.25)"


# -- minimize -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make_optimizer", "steps", "tolerance"),
    [
        (lambda: tp.train.SGD(0.01), 400, 1e-9),
        (lambda: tp.train.Momentum(0.005, 0.9), 400, 1e-9),
        (lambda: tp.train.Momentum(0.005, 0.9, use_nesterov=True), 400, 1e-9),
        (lambda: tp.train.Adam(0.05), 1500, 1e-4),
        (lambda: tp.train.RMSProp(0.002, momentum=0.5, centered=True), 1500, 1e-2),
        (lambda: tp.train.Adagrad(0.5), 1500, 1e-6),
    ],
    ids=["SGD", "Momentum", "Nesterov", "Adam", "RMSProp", "Adagrad"],
)
def test_minimize_solves_least_squares(
    make_optimizer: Callable[[], tp.train.Optimizer], steps: int, tolerance: float
) -> None:
    rng = np.random.default_rng(3)
    a = rng.standard_normal((30, 3))
    b = rng.standard_normal(30)
    solution = np.linalg.solve(a.T @ a, a.T @ b)  # the normal equations
    w = tp.variable(np.zeros(3), name=unique("lsq_w"))
    a_t, b_t = tp.tensor(a), tp.tensor(b)
    optimizer = make_optimizer()
    for _ in range(steps):
        loss = optimizer.minimize(lambda: tp.sum(tp.square(tp.matmul(a_t, w) - b_t)), [w])
    np.testing.assert_allclose(w.numpy(), solution, atol=tolerance)
    np.testing.assert_allclose(loss.item(), np.sum((a @ w.numpy() - b) ** 2), rtol=1e-6)


def test_minimize_without_var_list_trains_only_trainable_float_variables() -> None:
    w = tp.variable([1.0, 2.0], name=unique("w"))
    frozen = tp.variable(3.0, name=unique("frozen"), trainable=False)
    counter = tp.variable(4, name=unique("int"))  # trainable, but not float: not differentiated
    optimizer = tp.train.SGD(0.5)
    value = optimizer.minimize(lambda: tp.sum(w * w) * frozen + tp.cast(counter, "float32"))
    assert value.item() == pytest.approx(3.0 * 5.0 + 4.0)
    np.testing.assert_allclose(w.numpy(), [1.0 - 0.5 * 6.0, 2.0 - 0.5 * 12.0])  # d/dw = 2 * frozen * w
    assert frozen.item() == 3.0
    assert counter.item() == 4


def test_minimize_leaves_non_trainable_variables_of_var_list_alone() -> None:
    w = tp.variable(1.0, name=unique("w"))
    frozen = tp.variable(2.0, name=unique("frozen"), trainable=False)
    tp.train.SGD(0.25).minimize(lambda: w * frozen * frozen, [w, frozen])  # as TensorFlow.js: frozen is skipped
    assert w.item() == pytest.approx(1.0 - 0.25 * 4.0)
    assert frozen.item() == 2.0


def test_minimize_leaves_unused_variables_alone_and_makes_them_no_state() -> None:
    used = tp.variable([1.0, 1.0], name=unique("used"))
    unused = tp.variable([5.0], name=unique("unused"))
    optimizer = tp.train.Adam(0.1)
    optimizer.minimize(lambda: tp.sum(used * used), [used, unused])
    assert unused.tolist() == [5.0]
    assert [name for name, _ in optimizer.get_weights()] == ["iter", f"{used.name}/m", f"{used.name}/v"]


def test_minimize_refuses_a_var_list_without_trainable_variables() -> None:
    frozen = tp.variable(1.0, name=unique("frozen"), trainable=False)
    with pytest.raises(OptimizerError, match=r"SGD\.minimize\(\): none of the 1 variables of var_list is trainable"):
        tp.train.SGD(0.1).minimize(lambda: frozen * 2.0, [frozen])
    with pytest.raises(OptimizerError, match="var_list holds a Tensor"):
        tp.train.SGD(0.1).minimize(lambda: frozen * 2.0, [tp.tensor(1.0)])  # type: ignore[list-item]


# -- state ----------------------------------------------------------------------------------------------------------


def test_state_is_kept_per_variable_object_not_per_name() -> None:
    # two variables with the same name, keyed by the Variables: each has its own momentum
    first = tp.variable([0.0, 0.0], name="test_train/same")
    second = tp.variable([0.0, 0.0], name="test_train/same")
    optimizer = tp.train.Momentum(1.0, 0.5)
    optimizer.apply_gradients({first: tp.tensor([1.0, 1.0])})
    optimizer.apply_gradients({second: tp.tensor([2.0, 2.0])})
    optimizer.apply_gradients({first: tp.tensor([1.0, 1.0]), second: tp.tensor([2.0, 2.0])})
    # first: a = 1 then 0.5 * 1 + 1 = 1.5, w = -1 - 1.5; second: a = 2 then 0.5 * 2 + 2 = 3, w = -2 - 3
    assert first.tolist() == [-2.5, -2.5]
    assert second.tolist() == [-5.0, -5.0]
    momenta = [t.tolist() for name, t in optimizer.get_weights()[1:]]
    assert momenta == [[1.5, 1.5], [3.0, 3.0]]
    assert optimizer.iterations == 3


def test_state_survives_steps_and_goes_with_its_variable() -> None:
    w = tp.variable(np.ones((8, 8)), name=unique("w"))
    optimizer = tp.train.Adam(0.1)
    for _ in range(3):
        optimizer.apply_gradients({w: tp.ones([8, 8], "float64")})
    names = [name for name, _ in optimizer.get_weights()]
    assert names == ["iter", f"{w.name}/m", f"{w.name}/v"]
    assert optimizer.get_weights()[0][1].item() == 3
    m_ref = weakref.ref(optimizer.get_weights()[1][1])
    w_ref = weakref.ref(w)
    del w
    gc.collect()
    assert w_ref() is None, "the optimizer kept the variable alive"
    assert m_ref() is None, "the optimizer kept the state of a dead variable"
    assert [name for name, _ in optimizer.get_weights()] == ["iter"]


def test_slots_are_made_on_the_active_backend_with_the_variables_dtype() -> None:
    w = tp.variable(np.zeros(3, np.float64), name=unique("w"))
    optimizer = tp.train.Adagrad(0.1, initial_accumulator_value=0.25)
    optimizer.apply_gradients({w: tp.tensor(np.zeros(3))})
    (_, accumulator) = optimizer.get_weights()[1]
    assert (accumulator.dtype, accumulator.backend, accumulator.tolist()) == ("float64", "numpy", [0.25] * 3)


def test_get_and_set_weights_carry_the_state_to_a_new_optimizer() -> None:
    rng = np.random.default_rng(5)
    start = rng.standard_normal(4)
    w1 = tp.variable(start, name=unique("w"))
    w2 = tp.variable(start, name=unique("w"))
    first = tp.train.Adam(0.1, beta1=0.5)
    grads = [tp.tensor(rng.standard_normal(4)) for _ in range(4)]
    for g in grads[:3]:
        first.apply_gradients({w1: g})
    w2.assign(w1)
    second = tp.train.Adam(0.1, beta1=0.5)
    saved = [(name.replace(w1.name, w2.name), t) for name, t in first.get_weights()]
    second.set_weights(saved)
    assert second.iterations == 3
    first.apply_gradients({w1: grads[3]})
    second.apply_gradients({w2: grads[3]})  # the same step: same moments, same bias correction
    np.testing.assert_array_equal(w2.numpy(), w1.numpy())


def test_set_weights_checks_everything_before_changing_anything() -> None:
    w = tp.variable([1.0, 2.0], name=unique("w"))
    optimizer = tp.train.Adam()
    optimizer.apply_gradients({w: tp.tensor([1.0, 1.0])})
    before = optimizer.get_weights()
    with pytest.raises(OptimizerError, match=rf"Adam\.set_weights\(\): variable '{w.name}' lacks slots \['v'\]"):
        optimizer.set_weights([("iter", tp.tensor(7)), (f"{w.name}/m", tp.tensor([0.0, 0.0]))], [w])
    with pytest.raises(tp.ShapeError, match=r"slot 'v' for variable .* is float32\[3\]"):
        optimizer.set_weights(
            [("iter", 7), (f"{w.name}/m", tp.zeros([2])), (f"{w.name}/v", tp.zeros([3]))],
            [w],
        )
    with pytest.raises(OptimizerError, match="no slot"):
        optimizer.set_weights([("iter", 7), (f"{w.name}/velocity", tp.zeros([2]))], [w])
    assert optimizer.iterations == 1
    assert [(n, t.tolist()) for n, t in optimizer.get_weights()] == [(n, t.tolist()) for n, t in before]


# -- apply_gradients: what it accepts and what it refuses ----------------------------------------------------------


def test_gradients_for_a_subset_of_variables() -> None:
    a = tp.variable([1.0], name=unique("a"))
    b = tp.variable([1.0], name=unique("b"))
    optimizer = tp.train.Momentum(0.5, 0.9)
    optimizer.apply_gradients({a: tp.tensor([2.0]), b: None})  # None: no gradient, skipped
    assert (a.tolist(), b.tolist()) == ([0.0], [1.0])
    assert [name for name, _ in optimizer.get_weights()] == ["iter", f"{a.name}/momentum"]
    optimizer.apply_gradients({b.name: tp.tensor([2.0])})
    assert (a.tolist(), b.tolist()) == ([0.0], [0.0])  # a's momentum is not applied in a step without a's gradient


def test_apply_gradients_accepts_the_result_of_variable_grads() -> None:
    w = tp.variable([3.0], name=unique("w"))
    _, grads = tp.variable_grads(lambda: tp.sum(w * w), [w])
    tp.train.SGD(0.5).apply_gradients(grads)
    assert w.tolist() == [0.0]
    with pytest.raises(OptimizerError, match=r"pass the \.grads of tp\.variable_grads"):
        tp.train.SGD(0.5).apply_gradients(tp.variable_grads(lambda: tp.sum(w * w), [w]))  # type: ignore[arg-type]


def bad_gradients(good: tp.Variable, bad: tp.Variable) -> list[tuple[dict[Any, Any], type[Exception], str]]:
    """(grads, expected error, expected message pattern), each with a valid gradient for ``good`` first."""
    g = tp.tensor([1.0, 1.0])
    frozen = tp.variable([0.0, 0.0], name=unique("frozen"), trainable=False)
    integer = tp.variable([0, 0], name=unique("int"))
    return [
        ({good: g, "test_train/no such variable": g}, OptimizerError, "no live variable is named"),
        ({good: g, bad: tp.tensor([1.0, 2.0, 3.0])}, tp.ShapeError, r"is float32\[3\], but the variable is float32\["),
        ({good: g, bad: tp.tensor([1.0, 2.0], "float64")}, tp.DTypeError, r"float64\[2\], but the variable is float32"),
        ({good: g, bad: np.ones(2, np.float32)}, OptimizerError, "is a ndarray, not a Tensor"),
        ({good: g, frozen: g}, OptimizerError, "is not trainable"),
        ({good: g, integer: tp.tensor([1, 1])}, OptimizerError, r"int32\[2\]; only float variables"),
        ({good: g, tp.tensor([0.0, 0.0]): g}, OptimizerError, "keyed by Variables or variable names, got a Tensor"),
        ({good: g, good.name: g}, OptimizerError, "given twice"),
    ]


@pytest.mark.parametrize("case", range(8))
@pytest.mark.parametrize("kind", ["SGD", "Momentum", "Adam", "RMSProp", "Adagrad"])
def test_a_failing_apply_gradients_changes_nothing(kind: str, case: int) -> None:
    good = tp.variable([1.0, 2.0], name=unique("good"))
    bad = tp.variable([3.0, 4.0], name=unique("bad"))
    optimizer = {
        "SGD": lambda: tp.train.SGD(0.1),
        "Momentum": lambda: tp.train.Momentum(0.1, 0.9),
        "Adam": lambda: tp.train.Adam(0.1),
        "RMSProp": lambda: tp.train.RMSProp(0.1),
        "Adagrad": lambda: tp.train.Adagrad(0.1),
    }[kind]()
    optimizer.apply_gradients({good: tp.tensor([0.5, 0.5])})
    before = ([good.tolist(), bad.tolist()], [(n, t.tolist()) for n, t in optimizer.get_weights()])
    grads, error, pattern = bad_gradients(good, bad)[case]
    with pytest.raises(error, match=pattern) as info:
        optimizer.apply_gradients(grads)
    assert isinstance(info.value, tp.TensorplugError)
    assert str(info.value).startswith(f"{kind}.apply_gradients(): ")
    after = ([good.tolist(), bad.tolist()], [(n, t.tolist()) for n, t in optimizer.get_weights()])
    assert after == before
    assert optimizer.iterations == 1


def test_an_ambiguous_name_is_refused() -> None:
    first = tp.variable(1.0, name="test_train/twin")
    second = tp.variable(2.0, name="test_train/twin")
    with pytest.raises(OptimizerError, match="2 live variables are named 'test_train/twin'"):
        tp.train.SGD(0.1).apply_gradients({"test_train/twin": tp.tensor(1.0)})
    assert (first.item(), second.item()) == (1.0, 2.0)


def test_grads_must_be_a_mapping() -> None:
    with pytest.raises(OptimizerError, match="grads must be a mapping"):
        tp.train.SGD(0.1).apply_gradients([tp.tensor(1.0)])  # type: ignore[arg-type]


# -- hyper-parameters -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "pattern"),
    [
        (lambda: tp.train.SGD(-0.1), r"SGD: learning_rate must be >= 0, got -0.1"),
        (lambda: tp.train.SGD(float("nan")), r"SGD: learning_rate must be a finite number, got nan"),
        (lambda: tp.train.SGD("0.1"), r"SGD: learning_rate must be a finite number, got '0.1'"),
        (lambda: tp.train.SGD(True), r"SGD: learning_rate must be a finite number, got True"),
        (lambda: tp.train.Momentum(0.1, -0.5), r"Momentum: momentum must be >= 0"),
        (lambda: tp.train.Momentum(0.1, 0.9, use_nesterov=1), r"Momentum: use_nesterov must be True or False"),
        (lambda: tp.train.Adam(beta1=1.0), r"Adam: beta1 must be in \[0, 1\), got 1.0"),
        (lambda: tp.train.Adam(beta2=-0.1), r"Adam: beta2 must be in \[0, 1\), got -0.1"),
        (lambda: tp.train.Adam(epsilon=-1e-8), r"Adam: epsilon must be >= 0"),
        (lambda: tp.train.Adam(float("inf")), r"Adam: learning_rate must be a finite number, got inf"),
        (lambda: tp.train.RMSProp(0.1, decay=1.5), r"RMSProp: decay must be in \[0, 1\)"),
        (lambda: tp.train.RMSProp(0.1, momentum=-1.0), r"RMSProp: momentum must be >= 0"),
        (lambda: tp.train.RMSProp(0.1, centered="yes"), r"RMSProp: centered must be True or False"),
        (lambda: tp.train.Adagrad(0.1, 0.0), r"Adagrad: initial_accumulator_value must be > 0, got 0.0"),
        (lambda: tp.train.Adagrad(-1), r"Adagrad: learning_rate must be >= 0, got -1"),
    ],
)
def test_bad_hyper_parameters_are_refused_at_construction(build: Callable[[], object], pattern: str) -> None:
    with pytest.raises(OptimizerError, match=pattern) as info:
        build()
    assert isinstance(info.value, tp.TensorplugError)
    assert isinstance(info.value, ValueError)


def test_numpy_scalars_are_accepted_as_hyper_parameters() -> None:
    assert tp.train.Adam(np.float32(0.5), beta1=np.float64(0.5)).get_config()["beta1"] == 0.5


def test_updates_are_not_recorded_on_an_enclosing_tape() -> None:
    # a step taken while an outer gradient is being recorded must not become part of it
    w = tp.variable(2.0, name=unique("w"))
    optimizer = tp.train.Momentum(0.1, 0.9)

    def f(x: tp.Tensor) -> tp.Tensor:
        optimizer.apply_gradients({w: x * 1.0})
        return x * x

    assert tp.grad(f)(tp.tensor(3.0)).item() == 6.0
    assert w.item() == pytest.approx(2.0 - 0.1 * 3.0)
