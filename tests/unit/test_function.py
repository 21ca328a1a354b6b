"""tp.function: traced replays give what eager calls give, bit for bit; retracing, fallbacks and scopes."""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from in_threads import run_in_threads

import tensorplug as tp
from tensorplug.testing._conformance import Case
from tensorplug.testing.cases._composite import CASES as COMPOSITE_CASES

rng = np.random.default_rng(14)


@pytest.fixture(autouse=True, params=["lowered", "plain"])
def replay_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs twice: with the numpy backend's lowering (direct NumPy calls, buffer reuse), and with the
    plain replay (each kernel called in turn); both must give eager's bits."""
    if request.param == "plain":
        from tensorplug_numpy._backend import NumpyBackend

        monkeypatch.setattr(NumpyBackend, "lower_step", lambda self, program, index: None)
    return str(request.param)


def f32(*shape: int) -> tp.Tensor:
    return tp.tensor(rng.standard_normal(shape).astype(np.float32))


def same(a: Any, b: Any) -> None:
    """``a`` and ``b`` (tensors, or structures of them) hold the same bits, dtypes and shapes."""
    if isinstance(a, dict):
        assert isinstance(b, dict)
        assert list(a) == list(b)
        for k in a:
            same(a[k], b[k])
        return
    if isinstance(a, list | tuple):
        assert type(a) is type(b)
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            same(x, y)
        return
    assert isinstance(a, tp.Tensor), a
    assert isinstance(b, tp.Tensor), b
    assert (a.shape, a.dtype) == (b.shape, b.dtype)
    assert a.numpy().tobytes() == b.numpy().tobytes(), (a.numpy(), b.numpy())


def check_replays(fn: Callable[..., Any], make_args: Callable[[], tuple[Any, ...]], calls: int = 3) -> tp.Function:
    """Call ``tp.function(fn)`` on fresh arguments several times: each result equals ``fn``'s eager one, and only
    the first call traced (the others replayed)."""
    traced = tp.function(fn)
    for _ in range(calls):
        args = make_args()
        same(traced(*args), fn(*args))
    assert traced.trace_count == 1
    return traced


# -- values and gradients ---------------------------------------------------------------------------------------


def test_an_elementwise_chain_replays_bit_for_bit() -> None:
    def chain(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        return tp.exp(tp.sin(x) * 0.5 + tp.square(y)) / (1.0 + tp.abs(x - y))

    traced = check_replays(chain, lambda: (f32(3, 4), f32(4)))
    kernels = [s.kernel for s in traced.program(f32(3, 4), f32(4)).kernel_steps]
    assert kernels == ["Sin", "Multiply", "Square", "Add", "Exp", "Sub", "Abs", "Add", "RealDiv"]


def mlp_weights(sizes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    r = np.random.default_rng(seed)
    weights = []
    for a, b in itertools.pairwise(sizes):
        weights += [(r.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), np.zeros(b, np.float32)]
    return weights


def mlp(x: tp.Tensor, *params: tp.Tensor) -> tp.Tensor:
    h = x
    for i in range(0, len(params), 2):
        h = tp.matmul(h, params[i]) + params[i + 1]
        if i + 2 < len(params):
            h = tp.relu(h)
    return h


def test_an_mlp_forward_pass_replays_bit_for_bit() -> None:
    params = [tp.tensor(w) for w in mlp_weights((8, 16, 4))]
    check_replays(mlp, lambda: (f32(5, 8), *params))


def mlp_loss(x: tp.Tensor, labels: tp.Tensor, *params: tp.Tensor) -> tp.Tensor:
    return tp.losses.softmax_cross_entropy(labels, mlp(x, *params))


def onehot(n: int, classes: int) -> tp.Tensor:
    return tp.tensor(np.eye(classes, dtype=np.float32)[rng.integers(0, classes, n)])


def test_value_and_grads_of_an_mlp_loss_replay_bit_for_bit() -> None:
    params = [tp.tensor(w) for w in mlp_weights((8, 16, 4))]

    def value_and_grads(x: tp.Tensor, labels: tp.Tensor, *ps: tp.Tensor) -> Any:
        return tp.value_and_grads(lambda *ws: mlp_loss(x, labels, *ws))(list(ps))

    check_replays(value_and_grads, lambda: (f32(6, 8), onehot(6, 4), *params))


def test_softmax_cross_entropy_and_its_gradient_replay_bit_for_bit() -> None:
    def loss_and_grad(labels: tp.Tensor, logits: tp.Tensor) -> Any:
        return tp.value_and_grad(lambda z: tp.losses.softmax_cross_entropy(labels, z))(logits)

    check_replays(loss_and_grad, lambda: (onehot(7, 5), f32(7, 5)))


def test_second_order_gradients_replay_bit_for_bit() -> None:
    def second(x: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda u: tp.sum(tp.grad(lambda v: tp.sum(tp.sin(v) * v * v))(u)))(x)

    check_replays(second, lambda: (f32(5),))


def test_custom_grad_replays_bit_for_bit() -> None:
    @tp.custom_grad
    def clipped_square(x: tp.Tensor) -> Any:
        return tp.square(x), lambda dy: tp.clip_by_value(dy * 2.0 * x, -0.5, 0.5)

    check_replays(lambda x: tp.grad(lambda v: tp.sum(clipped_square(v) * 3.0))(x), lambda: (f32(6),))


@pytest.mark.parametrize(
    "case", [c for c in COMPOSITE_CASES if c.raises is None and c.check is None], ids=lambda c: c.id
)
def test_composite_conformance_cases_replay_as_they_run_eagerly(case: Case) -> None:
    """Each composite op (and its gradient where the case has one) traced, replayed on other values, equals eager."""
    arrays = [np.asarray(a) for a in case.inputs]

    def make_args() -> tuple[Any, ...]:
        out = []
        for a in arrays:
            jitter = rng.uniform(0.9, 1.1, a.shape).astype(a.dtype) if a.dtype.kind == "f" else 1
            out.append(tp.tensor(a * jitter))
        return tuple(out)

    check_replays(case.op, make_args)
    if case.grad:
        check_replays(lambda *xs: tp.grads(lambda *ys: tp.sum(case.op(*ys)))(list(xs)), make_args)


# -- variables and optimizers -----------------------------------------------------------------------------------


def train_pair(optimizer: Callable[[], Any], steps: int = 5) -> None:
    """The same MLP trained ``steps`` steps eagerly and through a tp.function: same losses, weights and slots."""
    sizes = (8, 16, 4)
    eager_vars = [tp.variable(w) for w in mlp_weights(sizes, 1)]
    traced_vars = [tp.variable(w) for w in mlp_weights(sizes, 1)]
    eager_opt, traced_opt = optimizer(), optimizer()

    @tp.function
    def step(x: tp.Tensor, labels: tp.Tensor) -> tp.Tensor:
        return traced_opt.minimize(lambda: mlp_loss(x, labels, *traced_vars), traced_vars)

    for _ in range(steps):
        x, labels = f32(6, 8), onehot(6, 4)
        eager_loss = eager_opt.minimize(lambda: mlp_loss(x, labels, *eager_vars), eager_vars)  # noqa: B023 (called here)
        same(step(x, labels), eager_loss)
        for a, b in zip(traced_vars, eager_vars, strict=True):
            same(tp.tensor(a), tp.tensor(b))
    assert step.trace_count == 1
    assert traced_opt.iterations == eager_opt.iterations == steps
    same([w for _, w in traced_opt.get_weights()], [w for _, w in eager_opt.get_weights()])


def test_an_sgd_step_inside_a_function_updates_the_variables_at_every_call() -> None:
    train_pair(lambda: tp.train.SGD(0.1))


def test_an_adam_step_makes_its_slots_at_the_first_call_and_replays_the_rest() -> None:
    train_pair(lambda: tp.train.Adam(0.01))


@pytest.mark.parametrize("make", [lambda: tp.train.Momentum(0.1, 0.9), lambda: tp.train.RMSProp(0.01, centered=True)])
def test_other_optimizers_replay_as_they_run_eagerly(make: Callable[[], Any]) -> None:
    train_pair(make, steps=3)


def test_a_snapshot_of_a_variable_taken_before_the_trace_stays_a_constant() -> None:
    w = tp.variable([1.0, 2.0])
    anchor = tp.tensor(w)  # shares w's storage

    @tp.function
    def step() -> tp.Tensor:
        penalty = tp.sum(tp.square(w - anchor))
        w.assign(w + 1.0)
        return penalty

    assert [step().item() for _ in range(3)] == [0.0, 2.0, 8.0]
    assert w.tolist() == [4.0, 5.0]


def test_the_same_tensor_passed_twice_then_two_tensors_give_eager_results() -> None:
    @tp.function
    def f(a: tp.Tensor, b: tp.Tensor) -> tp.Tensor:
        return a - b

    x = tp.tensor([1.0, 2.0])
    assert f(x, x).tolist() == [0.0, 0.0]
    assert f(x, tp.tensor([0.5, 0.5])).tolist() == [0.5, 1.5]


def test_an_argument_that_is_a_captured_tensor_is_one_tensor_with_it() -> None:
    c = tp.tensor([1.0, 2.0])

    def slope(x: tp.Tensor) -> tp.Tensor:  # d/dx sum(x * c): c, and 2c when x is c itself
        return tp.grad(lambda x: tp.sum(x * c))(x)

    traced = tp.function(slope)
    assert slope(c).tolist() == [2.0, 4.0]
    assert traced(c).tolist() == [2.0, 4.0]  # the trace
    assert traced(c).tolist() == [2.0, 4.0]  # its replay
    assert traced(tp.tensor([5.0, 5.0])).tolist() == [1.0, 2.0]  # another tensor: a trace of its own
    assert traced(tp.tensor([7.0, 7.0])).tolist() == [1.0, 2.0]
    assert traced(c).tolist() == [2.0, 4.0]
    assert traced.trace_count == 2


def test_a_captured_tensor_passed_after_another_argument_selects_its_own_trace() -> None:
    c = tp.tensor([1.0, 2.0])

    @tp.function
    def slope(x: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda x: tp.sum(x * c))(x)

    assert slope(tp.tensor([5.0, 5.0])).tolist() == [1.0, 2.0]
    assert slope(c).tolist() == [2.0, 4.0]
    assert slope(c).tolist() == [2.0, 4.0]
    assert slope(tp.tensor([3.0, 3.0])).tolist() == [1.0, 2.0]
    assert slope.trace_count == 2


def test_a_captured_argument_met_in_a_call_that_updates_variables_is_refused_then_traced_as_one() -> None:
    c = tp.tensor([1.0, 2.0])
    w = tp.variable([0.0, 0.0])

    @tp.function
    def step(x: tp.Tensor) -> tp.Tensor:
        slope = tp.grad(lambda x: tp.sum(x * c))(x)
        w.assign(w + slope)
        return slope

    with pytest.raises(tp.InvalidArgumentError) as caught:
        step(c)
    message = str(caught.value)
    assert "tp.function 'step': the argument float32[2] is also a tensor the function captures" in message
    assert "pass that tensor as an argument only" in message
    w.assign([0.0, 0.0])
    assert step(c).tolist() == [2.0, 4.0]
    assert step(c).tolist() == [2.0, 4.0]
    assert w.tolist() == [4.0, 8.0]


def test_a_variable_argument_is_read_and_assigned_by_identity() -> None:
    @tp.function
    def bump(v: tp.Variable) -> tp.Tensor:
        v.assign(v * 2.0)
        return v + 0.0

    a, b = tp.variable([1.0]), tp.variable([10.0])
    assert [bump(a).item(), bump(a).item(), bump(b).item()] == [2.0, 4.0, 20.0]
    assert (a.item(), b.item(), bump.trace_count) == (4.0, 20.0, 2)


# -- randomness ---------------------------------------------------------------------------------------------------


def test_seeded_dropout_replays_the_eager_values() -> None:
    check_replays(lambda x: tp.dropout(x, 0.5, seed=3), lambda: (f32(50),))


def test_unseeded_random_ops_draw_fresh_values_at_every_replay() -> None:
    noisy = tp.function(lambda x: x + tp.random_normal(x.shape))
    x = tp.zeros((64,))
    draws = [noisy(x).numpy().tobytes() for _ in range(4)]
    assert len(set(draws)) == 4
    assert noisy.trace_count == 1


# -- signatures and retracing -------------------------------------------------------------------------------------


def test_python_arguments_are_static_and_pick_the_branch() -> None:
    @tp.function
    def f(x: tp.Tensor, mode: str, scale: float = 1.0) -> tp.Tensor:
        return tp.exp(x) * scale if mode == "exp" else tp.log(x) * scale

    x = tp.tensor([1.0, 2.0])
    same(f(x, "exp"), tp.exp(x))
    same(f(x, "log"), tp.log(x))
    same(f(x, "log", scale=3.0), tp.log(x) * 3.0)
    same(f(x, "exp"), tp.exp(x))
    assert f.trace_count == 3


def test_a_new_shape_or_dtype_retraces() -> None:
    f = tp.function(lambda x: x * 2)
    same(f(tp.tensor([1.0])), tp.tensor([2.0]))
    same(f(tp.tensor([1.0, 2.0])), tp.tensor([2.0, 4.0]))
    same(f(tp.tensor([1, 2])), tp.tensor([2, 4]))
    same(f(tp.tensor([3.0])), tp.tensor([6.0]))
    assert f.trace_count == 3
    f.clear_cache()
    f(tp.tensor([3.0]))
    assert f.trace_count == 4


def test_nested_arguments_and_results_keep_their_structure() -> None:
    @tp.function
    def f(pair: tuple[tp.Tensor, tp.Tensor], options: dict[str, Any]) -> dict[str, Any]:
        a, b = pair
        return {"sum": a + b, "parts": [a * options["k"], b], "k": options["k"]}

    for k in (2.0, 2.0, 3.0):
        a, b = f32(2), f32(2)
        out = f((a, b), {"k": k})
        same({"sum": out["sum"], "parts": out["parts"]}, {"sum": a + b, "parts": [a * k, b]})
        assert out["k"] == k
    assert f.trace_count == 2


def test_an_unhashable_python_argument_is_refused_with_what_to_pass() -> None:
    f = tp.function(lambda x, w: x)
    with pytest.raises(tp.InvalidArgumentError, match=r"argument 1 is a ndarray \(a numpy array: pass tp.tensor"):
        f(tp.tensor([1.0]), np.ones(2))


def test_retracing_past_max_traces_warns_once_and_keeps_the_cache_bounded() -> None:
    f = tp.function(lambda x, n: x * n, max_traces=3)
    x = tp.tensor([1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(6):
            assert f(x, n).tolist() == [float(n)]
    retrace = [w for w in caught if issubclass(w.category, tp.FunctionWarning)]
    assert len(retrace) == 1
    assert "more than max_traces=3" in str(retrace[0].message)
    assert f.trace_count == 6
    assert len(f._cache) == 3


# -- what cannot be replayed ---------------------------------------------------------------------------------------


def test_a_value_read_inside_the_function_makes_it_run_eagerly_with_one_warning() -> None:
    @tp.function
    def f(x: tp.Tensor) -> tp.Tensor:
        if tp.sum(x).item() > 0:
            return x * 2.0
        return x * -1.0

    with pytest.warns(tp.FunctionWarning, match=r"float32\[\] \(computed by the function\): its value was read back"):
        assert f(tp.tensor([1.0, 2.0])).tolist() == [2.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(tp.tensor([-1.0, -2.0])).tolist() == [1.0, 2.0]  # right branch: eager, no second warning
        assert f(tp.tensor([3.0, 1.0])).tolist() == [6.0, 2.0]
    assert f.trace_count == 1
    with pytest.raises(tp.TensorplugError, match=r"runs eagerly for these arguments: .*test_function\.py"):
        f.program(tp.tensor([1.0, 2.0]))


def test_reading_a_constant_is_fine() -> None:
    table = tp.tensor([3, 1])

    @tp.function
    def f(x: tp.Tensor) -> tp.Tensor:
        return tp.reshape(x, table.tolist())

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(f(tp.tensor([1.0, 2.0, 3.0])), tp.tensor([[1.0], [2.0], [3.0]]))
        same(f(tp.tensor([4.0, 5.0, 6.0])), tp.tensor([[4.0], [5.0], [6.0]]))
    assert f.program(tp.tensor([1.0, 2.0, 3.0])).kernel_steps[0].kernel == "Reshape"


def test_taking_the_raw_storage_of_a_traced_tensor_runs_eagerly() -> None:
    f = tp.function(lambda x: tp.tensor(np.sort((x * 2.0).raw)))
    with pytest.warns(tp.FunctionWarning, match=r"its raw storage was taken \(Tensor.raw\)"):
        f(tp.tensor([2.0, 1.0]))
    assert f(tp.tensor([3.0, -1.0])).tolist() == [-2.0, 6.0]


def test_printing_a_traced_tensor_runs_eagerly() -> None:
    @tp.function
    def f(x: tp.Tensor) -> tp.Tensor:
        y = x + 1.0
        str(y)
        return y

    with pytest.warns(tp.FunctionWarning, match="read back to Python"):
        f(tp.tensor([1.0]))
    assert f(tp.tensor([5.0])).tolist() == [6.0]


# -- scopes, observers, errors, threads ----------------------------------------------------------------------------


def test_gradients_flow_through_a_function_called_in_an_outer_gradient_scope() -> None:
    f = tp.function(lambda x, w: tp.tanh(tp.matmul(x, w)))
    x, w = f32(3, 4), f32(4, 2)
    f(x, w)  # a trace exists: the outer scope must still see the kernels
    same(tp.grad(lambda w: tp.sum(f(x, w)))(w), tp.grad(lambda w: tp.sum(tp.tanh(tp.matmul(x, w))))(w))


def test_gradient_overrides_are_captured_at_trace_time_and_a_new_scope_retraces() -> None:
    double = {"Relu": lambda dy, saved, attrs: (dy * 2.0,)}

    def d_relu(x: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda v: tp.sum(tp.relu(v)))(x)

    f = tp.function(d_relu)
    x = tp.tensor([-1.0, 2.0])
    same(f(x), tp.tensor([0.0, 1.0]))
    with tp.gradient_overrides(double):
        same(f(x), tp.tensor([2.0, 2.0]))
        same(f(tp.tensor([3.0, -3.0])), tp.tensor([2.0, 2.0]))
    with tp.gradient_overrides(double):
        f(x)
    same(f(tp.tensor([-3.0, 3.0])), tp.tensor([0.0, 1.0]))
    assert f.trace_count == 2


def test_tp_profile_lists_the_replayed_kernels() -> None:
    def loss(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
        return tp.grad(lambda w: tp.sum(tp.tanh(x * w)))(w)

    f = tp.function(loss)
    x, w = f32(4), f32(4)
    f(x, w)
    replayed = tp.profile(f, x, w)
    eager = tp.profile(loss, x, w)
    assert [(k.name, k.phase) for k in replayed.kernels] == [(k.name, k.phase) for k in eager.kernels]
    same(replayed.result, eager.result)
    assert f.trace_count == 1


def test_debug_mode_catches_a_nan_in_a_replay() -> None:
    f = tp.function(lambda x: tp.sqrt(x) + 1.0)
    f(tp.tensor([4.0]))
    with tp.debug(), pytest.raises(tp.NonFiniteError, match="kernel 'Sqrt' on backend 'numpy'"):
        f(tp.tensor([-4.0]))
    assert f.trace_count == 1


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_error_in_a_replay_names_the_kernel_backend_shapes_and_dtypes() -> None:
    def positive_only(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        x = inputs["x"]
        if (x < 0).any():
            raise ValueError("negative input")
        return x * 2

    tp.register_kernel("TestPositiveOnly", "numpy", positive_only)
    f = tp.function(lambda x: tp.run_kernel("TestPositiveOnly", {"x": tp.exp(x) - 2.0}))
    f(tp.tensor([1.0, 2.0, 3.0]))
    with pytest.raises(
        tp.KernelError,
        match=r"kernel 'TestPositiveOnly' on backend 'numpy' failed for inputs x=float32\[3\] and attrs \{\}: "
        r"ValueError: negative input \(replaying tp.function '<lambda>', kernel call 3 of 3",
    ):
        f(tp.tensor([1.0, -2.0, 3.0]))


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_registered_after_the_trace_makes_it_trace_again() -> None:
    f = tp.function(lambda x: tp.abs(x))
    x = tp.tensor([-1.0])
    f(x)
    tp.register_kernel("Abs", "numpy", lambda inputs, attrs, backend: inputs["x"] * 0 + 7, override=True)
    assert f(x).tolist() == [7.0]
    tp.unregister_kernel("Abs", "numpy")
    assert f(x).tolist() == [1.0]
    assert f.trace_count == 3


def test_two_threads_call_one_function() -> None:
    params = [tp.tensor(w) for w in mlp_weights((8, 16, 4))]
    f = tp.function(mlp)
    inputs = [f32(5, 8) for _ in range(40)]
    expected = [mlp(x, *params) for x in inputs]
    results: dict[int, tp.Tensor] = {}

    def work(offset: int) -> None:
        for i in range(offset, len(inputs), 2):
            results[i] = f(inputs[i], *params)

    run_in_threads(work, 2)
    same([results[i] for i in range(len(inputs))], expected)
    assert f.trace_count <= 2  # each thread may trace the one signature once


def test_a_function_called_inside_another_is_part_of_its_trace() -> None:
    inner = tp.function(lambda x: tp.exp(x))
    outer = tp.function(lambda x: inner(x) + 1.0)
    x = tp.tensor([0.0, 1.0])
    for _ in range(2):
        same(outer(x), tp.exp(x) + 1.0)
    assert [s.kernel for s in outer.program(x).kernel_steps] == ["Exp", "Add"]
    assert inner.trace_count == 0


def test_the_program_lists_arguments_variables_steps_and_outputs() -> None:
    w = tp.variable([1.0, 2.0], name="test_function_w")

    @tp.function
    def f(x: tp.Tensor) -> tp.Tensor:
        w.assign(w * x)
        return tp.sum(w)

    text = str(f.program(tp.tensor([1.0, 1.0])))
    assert "r0 = argument 0: float32[2]" in text
    assert "variable 'test_function_w': float32[2]" in text
    assert "Multiply(a=r1, b=r0) -> float32[2]" in text
    assert "assign variable 'test_function_w' = r2" in text


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_input_name_that_is_not_a_str_runs_eagerly() -> None:
    # The plain replay is generated Python source: only names whose repr is a plain literal may go into it.
    class Name:
        def __repr__(self) -> str:
            return "__import__('os')"

    @tp.register_kernel("OddNames", "numpy")
    def odd(inputs: dict[Any, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return next(iter(inputs.values())) * 2.0

    f = tp.function(lambda x: tp.run_kernel("OddNames", {Name(): x}))  # type: ignore[dict-item]
    with pytest.warns(tp.FunctionWarning, match="an input named __import__"):
        f(tp.tensor([1.0]))
    assert f(tp.tensor([2.0])).tolist() == [4.0]


# -- the backend's lowering (Backend.lower_step and compile; the numpy lowering) ------------------------------------


def replay_source(f: tp.Function) -> str:
    """The generated source of ``f``'s one trace (the lowered replay where the backend lowered it)."""
    import inspect
    import linecache

    (entry,) = f._cache.values()
    return "".join(linecache.getlines(inspect.unwrap(entry.replay).__code__.co_filename))  # the numpy one is wrapped


def replay_calls(f: tp.Function) -> set[Any]:
    """What the generated replay of ``f``'s one trace calls directly (its ``s<step>`` and ``i<step>`` names)."""
    import functools
    import inspect

    (entry,) = f._cache.values()
    namespace = inspect.unwrap(entry.replay).__globals__
    calls = set()
    for name, value in namespace.items():
        if re.fullmatch(r"[si]\d+", name) and name + "(" in replay_source(f):
            calls.add(("into", value.args[0]) if isinstance(value, functools.partial) else value)
    return calls


@pytest.mark.parametrize("replay_kind", ["lowered"], indirect=True)  # about the lowering only
def test_the_numpy_lowering_calls_numpy_directly_and_reuses_dead_buffers(replay_kind: str) -> None:
    params = [tp.tensor(w) for w in mlp_weights((64, 256, 10))]
    f = check_replays(mlp, lambda: (f32(128, 64), *params))
    calls = replay_calls(f)
    assert np.matmul in calls
    assert np.maximum in calls
    assert ("into", np.add) in calls  # the bias add writes into the matmul's result (128x256: large)
    assert re.search(r"= i\d+\(r(\d+), r\1, ", replay_source(f))  # into the dead input it also reads


def test_large_sgd_and_adam_steps_replay_bit_for_bit_with_buffer_reuse() -> None:
    """Big enough for buffer reuse: the updates of Variables, their reads, and the Adam slots stay eager's bits."""
    for make in (lambda: tp.train.SGD(0.1), lambda: tp.train.Adam(0.01)):
        sizes = (64, 300, 10)
        eager_vars = [tp.variable(w) for w in mlp_weights(sizes, 2)]
        traced_vars = [tp.variable(w) for w in mlp_weights(sizes, 2)]
        eager_opt, traced_opt = make(), make()

        @tp.function
        def step(x: tp.Tensor, labels: tp.Tensor) -> tp.Tensor:
            return traced_opt.minimize(lambda: mlp_loss(x, labels, *traced_vars), traced_vars)  # noqa: B023

        for _ in range(3):
            x, labels = f32(100, 64), onehot(100, 10)
            x_before = x.numpy().copy()
            eager_loss = eager_opt.minimize(lambda: mlp_loss(x, labels, *eager_vars), eager_vars)  # noqa: B023
            same(step(x, labels), eager_loss)
            assert x.numpy().tobytes() == x_before.tobytes()  # an argument is never written into
            for a, b in zip(traced_vars, eager_vars, strict=True):
                same(tp.tensor(a), tp.tensor(b))
        same([w for _, w in traced_opt.get_weights()], [w for _, w in eager_opt.get_weights()])


def test_buffer_reuse_never_writes_into_what_a_live_value_sees() -> None:
    """Views (reshape, transpose, broadcast), returned intermediates, constants and Variables keep their values."""
    constant = tp.tensor(rng.standard_normal((200, 100)).astype(np.float32))
    v = tp.variable(rng.standard_normal((200, 100)).astype(np.float32))
    w = tp.variable(np.zeros((200, 100), np.float32))

    def f(x: tp.Tensor) -> Any:
        a = x * 2.0  # returned, and read by later steps
        b = tp.exp(a) + 1.0
        c = tp.reshape(b, (100, 200))  # a view of b, live after b's last elementwise use
        d = b * 3.0
        e = tp.transpose(d) + 1.0  # a non-C-contiguous operand: a fresh array, with eager's layout
        g = (d - constant) * v
        v.assign(tp.tanh(g))  # bounded, so that the calls do not overflow
        s = x * 3.0
        w.assign(s)  # w holds s's array: s's later last use must not write into it
        h = s + 1.0
        f_order = tp.transpose(c) * 2.0  # a Fortran-ordered array the replay owns
        mixed = b + f_order  # eager gives a C-ordered result: writing into f_order would not
        folded = constant * 2.0  # the same at every call: computed once, when lowering
        a4 = folded + x * 4.0  # folded's last use: it must not be written into, the next call reads it again
        view = tp.reshape(a4, (100, 200))  # a view of a4, returned: a4's last use must not write into it
        ones = tp.ones_like(tp.transpose(x))  # Fortran-ordered, as its input
        return a, c, tp.sum(e * 2.0, axis=0), g * g, h, mixed, tp.sum(mixed, axis=1), view, a4 + 1.0, ones

    for _ in range(3):
        x = f32(200, 100)
        keep = (constant.numpy().copy(), x.numpy().copy())
        traced = tp.function(f)
        traced(x)
        traced(x)  # a first replay, which must leave what the next one reads as it found it
        v_value = v.numpy().copy()
        got = traced(x)
        v_got = v.numpy().copy()
        assert w.numpy().tobytes() == (x * 3.0).numpy().tobytes()
        v.assign(v_value)
        expected = f(x)
        same(got, expected)
        assert v_got.tobytes() == v.numpy().tobytes()
        assert [t.numpy().strides for t in got] == [t.numpy().strides for t in expected]
        assert (constant.numpy().tobytes(), x.numpy().tobytes()) == (keep[0].tobytes(), keep[1].tobytes())


def test_integer_sums_and_products_keep_their_dtype_when_lowered() -> None:
    def f(x: tp.Tensor) -> Any:
        return tp.sum(x * 3), tp.sum(-x, axis=0), tp.max(tp.abs(x), axis=1)

    check_replays(f, lambda: (tp.tensor(rng.integers(-100, 100, (4, 5)).astype(np.int32)),))


def test_a_lowering_that_raises_warns_once_and_the_plain_replay_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug_numpy._backend import NumpyBackend

    def broken(self: Any, program: tp.Program, index: int) -> Any:
        raise RuntimeError("lowering bug")

    monkeypatch.setattr(NumpyBackend, "lower_step", broken)
    f = tp.function(lambda x: tp.tanh(x) * 2.0)
    with pytest.warns(tp.FunctionWarning, match=r"backend 'numpy' failed to lower .*RuntimeError: lowering bug"):
        same(f(tp.tensor([1.0, 2.0])), tp.tanh(tp.tensor([1.0, 2.0])) * 2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (2, 3, 3):  # a second signature traces (and fails to lower) again: no second warning
            x = f32(n)
            same(f(x), tp.tanh(x) * 2.0)
    assert f.trace_count == 2


def test_lower_false_keeps_the_plain_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug_numpy._backend import NumpyBackend

    calls = []
    monkeypatch.setattr(NumpyBackend, "lower_step", lambda self, program, index: calls.append(program))
    f = tp.function(lambda x: x + 1.0, lower=False)
    f(tp.tensor([1.0]))
    g = tp.function(lambda x: x + 1.0)
    g(tp.tensor([1.0]))
    assert len(calls) == 1


def test_an_error_on_a_lowered_line_names_the_kernel_backend_and_shapes(replay_kind: str) -> None:
    import inspect

    f = tp.function(lambda x: tp.tanh(x + x))
    f(tp.tensor([1.0, 2.0]))
    if replay_kind == "lowered":
        assert np.add in replay_calls(f)
    # The numpy kernels are quiet on overflow: make the Add line itself raise, as a checking kernel would.
    (entry,) = f._cache.values()
    namespace = inspect.unwrap(entry.replay).__globals__
    name = "s0" if replay_kind == "lowered" else "k0"
    original = namespace[name]

    def checked(*args: Any) -> Any:
        out = original(*args)
        if not np.isfinite(out).all():
            raise FloatingPointError("overflow encountered in add")
        return out

    namespace[name] = checked
    with pytest.raises(
        tp.KernelError,
        match=r"kernel 'Add' on backend 'numpy' failed for inputs a=float32\[2\], b=float32\[2\] and attrs \{\}: "
        r"FloatingPointError: overflow .*\(replaying tp.function '<lambda>', kernel call 1 of 2",
    ):
        f(tp.tensor([1.0, 3e38]))


def test_a_lowering_without_line_numbers_still_gives_a_kernel_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug_numpy._backend import NumpyBackend

    def opaque(self: Any, program: tp.Program) -> Any:
        def replay(arguments: list[Any], variables: list[Any], host: list[Any]) -> tuple[Any, ...]:
            raise ValueError("fused kernel failed")

        return replay

    monkeypatch.setattr(NumpyBackend, "compile", opaque)
    f = tp.function(lambda x: x * 2.0)
    f(tp.tensor([1.0]))
    with pytest.raises(tp.KernelError, match=r"lowered by backend 'numpy' failed: ValueError: fused kernel failed"):
        f(tp.tensor([1.0]))


def test_tp_profile_and_debug_mode_bypass_the_lowered_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug_numpy._backend import NumpyBackend

    def poisoned(self: Any, program: tp.Program) -> Any:
        def replay(arguments: list[Any], variables: list[Any], host: list[Any]) -> tuple[Any, ...]:
            raise AssertionError("the lowered replay ran under an observer")

        return replay

    monkeypatch.setattr(NumpyBackend, "compile", poisoned)
    f = tp.function(lambda x: tp.tanh(x) * 2.0)
    x = f32(3)
    f(x)
    assert [k.name for k in tp.profile(f, x).kernels] == ["Tanh", "Multiply"]
    with tp.debug():
        same(f(x), tp.tanh(x) * 2.0)
