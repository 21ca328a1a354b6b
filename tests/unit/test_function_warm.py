"""The warm call path of ``tp.function``: a call matching the signature it last replayed, for a program that is a
pure function of its tensor arguments, replays without building the signature key. It must give what the general
path gives, bit for bit, and leave every other call to the general path."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import pytest
from in_threads import run_in_threads

import tensorplug as tp
from tensorplug.kernel_factories import unary

pytestmark = pytest.mark.usefixtures("tensorplug_registries")

W = tp.tensor([[0.5, -1.0], [2.0, 0.25]])


def mlp(x: tp.Tensor) -> tp.Tensor:
    return tp.relu(x @ W) * 2.0 - 1.0


def several(x: tp.Tensor, y: tp.Tensor) -> dict[str, Any]:
    return {"sum": x + y, "pair": (x * y, tp.exp(x))}


def gradient(x: tp.Tensor) -> tp.Tensor:
    return tp.grad(lambda t: tp.sum(tp.tanh(t * W + 0.5)))(x)


def general(f: tp.Function[..., Any], *args: Any) -> Any:
    """A call by the general path: the warm path forgotten first."""
    f._warm = None
    return f(*args)


def leaves(value: Any) -> list[np.ndarray]:
    if isinstance(value, tp.Tensor):
        return [value.numpy()]
    if isinstance(value, dict):
        return [a for k in sorted(value) for a in leaves(value[k])]
    return [a for v in value for a in leaves(v)]


@pytest.mark.parametrize(
    ("fn", "args"),
    [
        (mlp, (np.array([[1.0, -2.0], [0.5, 3.0]], np.float32),)),
        (several, (np.array([1.0, 2.0], np.float32), np.array([-1.0, 0.5], np.float32))),
        (gradient, (np.array([[0.3, -0.7], [1.1, 0.0]], np.float32),)),
        (mlp, (np.array([[1.0, -2.0]], np.float64),)),
    ],
)
def test_the_warm_path_gives_the_general_path_s_bits(fn: Any, args: tuple[np.ndarray, ...]) -> None:
    f = tp.function(fn)
    tensors = [tp.tensor(a) for a in args]
    f(*tensors)  # the trace
    f(*tensors)  # a replay by the general path, which makes the warm path
    assert f._warm is not None
    assert f._warm.entry.pure  # replayed by the leanest form
    for values in (args, tuple(a * 3 - 1 for a in args)):
        fresh = [tp.tensor(v.astype(v.dtype)) for v in values]
        warm, cold = f(*fresh), general(f, *fresh)
        f(*fresh)
        for a, b in zip(leaves(warm), leaves(cold), strict=True):
            assert a.dtype == b.dtype
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)
    assert f.trace_count == 1


def warmed(fn: Any, *args: tp.Tensor) -> tp.Function[..., Any]:
    f = tp.function(fn)
    f(*args)
    f(*args)
    assert f._warm is not None
    return f


def test_another_shape_or_dtype_traces_again() -> None:
    f = warmed(mlp, tp.tensor([[1.0, 2.0]]))
    assert f(tp.tensor([[1.0, 2.0], [3.0, 4.0]])).shape == (2, 2)
    assert f(tp.tensor([[1.0, 2.0]], "float64")).dtype == "float64"
    assert f.trace_count == 3


def test_the_same_tensor_twice_is_one_argument_as_on_the_general_path() -> None:
    f = warmed(several, tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0]))
    x = tp.tensor([2.0, 5.0])
    assert f(x, x)["sum"].tolist() == [4.0, 10.0]
    assert f.trace_count == 2  # a signature of its own
    dx = tp.grad(lambda t: tp.sum(f(t, t)["sum"]))(x)
    assert dx.tolist() == [2.0, 2.0]  # inside a gradient scope: plain Python, both uses of t


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_a_tensor_repeated_at_any_position_is_a_signature_of_its_own(n: int) -> None:
    def total(*xs: tp.Tensor) -> tp.Tensor:
        out = xs[0]
        for i, x in enumerate(xs[1:], start=2):
            out = out + x * float(i)
        return out

    f = tp.function(total, max_traces=16)
    first_args = [tp.tensor([float(i)]) for i in range(n)]
    f(*first_args)
    f(*first_args)
    assert f._warm is not None
    for first in range(n):
        for second in range(first + 1, n):
            args = [tp.tensor([float(i)]) for i in range(n)]
            args[second] = args[first]
            expected = sum(a.item() * (1 if i == 0 else i + 1) for i, a in enumerate(args))
            f(*first_args)  # (a trace forgets the warm path: a replay of the distinct arguments makes it again)
            assert f._warm is not None
            traces = f.trace_count
            assert f(*args).item() == expected
            assert f.trace_count == traces + 1, (first, second)  # a signature of its own, never the warm trace


def test_a_program_reading_a_variable_takes_the_warm_path_and_reads_its_value_now() -> None:
    v = tp.variable([1.0, 2.0], name="warm-v")
    f = warmed(lambda x: x * v, tp.tensor([1.0, 1.0]))
    v.assign(tp.tensor([5.0, 6.0]))
    assert f(tp.tensor([1.0, 1.0])).tolist() == [5.0, 6.0]
    assert f._warm is not None
    assert not f._warm.entry.pure  # replayed by the general path's own replay, the lookup skipped


def test_two_threads_replay_a_program_reading_a_variable_on_the_warm_path() -> None:
    v = tp.variable(np.array([0.5, -2.0, 3.0], np.float32), name="warm-threads")
    f = warmed(lambda x: tp.relu(x * v) + 1.0, tp.tensor(np.ones(3, np.float32)))
    inputs = [tp.tensor(np.array([i, -i, 0.5 * i], np.float32)) for i in range(40)]
    expected = [(tp.relu(x * v) + 1.0).numpy() for x in inputs]
    results: dict[int, np.ndarray] = {}

    def work(offset: int) -> None:
        for i in range(offset, len(inputs), 2):
            results[i] = f(inputs[i]).numpy()

    run_in_threads(work, 2)
    for i, want in enumerate(expected):
        np.testing.assert_array_equal(results[i], want)
    assert f.trace_count == 1


def sgd_setup() -> tuple[tp.Function[..., Any], list[tp.Variable]]:
    """A training step (a relu layer, softmax cross-entropy, Adam) on Variables of its own."""
    rng = np.random.default_rng(7)
    w = tp.variable(rng.normal(size=(6, 4)).astype(np.float32), name="warm-w")
    b = tp.variable(np.zeros(4, np.float32), name="warm-b")
    optimizer = tp.train.Adam(0.05)  # its moments are Variables the step reads and assigns too
    labels = tp.one_hot(tp.tensor(np.array([0, 3, 1, 2, 3], np.int32)), 4)

    def step(x: tp.Tensor) -> tp.Tensor:
        return optimizer.minimize(lambda: tp.losses.softmax_cross_entropy(labels, tp.relu(x @ w + b)), [w, b])

    return tp.function(step), [w, b]


def test_a_training_step_on_the_warm_path_gives_the_general_path_s_bits_and_variables() -> None:
    warm_f, warm_vars = sgd_setup()
    cold_f, cold_vars = sgd_setup()
    rng = np.random.default_rng(3)
    for i in range(5):
        x = tp.tensor(rng.normal(size=(5, 6)).astype(np.float32))
        warm_loss = warm_f(x)
        cold_loss = general(cold_f, x)
        if i >= 2:
            assert warm_f._warm is not None
        np.testing.assert_array_equal(warm_loss.numpy(), cold_loss.numpy())
        for a, b in zip(warm_vars, cold_vars, strict=True):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert warm_f.trace_count == cold_f.trace_count == 1


def test_a_returned_variable_is_the_variable_itself_on_the_warm_path() -> None:
    v = tp.variable([1.0, 2.0], name="warm-returned")

    def step(x: tp.Tensor) -> tp.Variable:
        v.assign(v + x)
        return v

    f = warmed(step, tp.tensor([1.0, 1.0]))
    assert f(tp.tensor([1.0, 1.0])) is v
    assert v.tolist() == [4.0, 5.0]


def test_a_variable_gone_since_the_trace_takes_the_general_path_which_traces_again() -> None:
    holder = {"v": tp.variable([1.0, 2.0], name="warm-old")}
    f = warmed(lambda x: x * holder["v"], tp.tensor([1.0, 1.0]))
    holder["v"] = tp.variable([3.0, 4.0], name="warm-new")
    gc.collect()
    assert f(tp.tensor([1.0, 1.0])).tolist() == [3.0, 4.0]
    assert f.trace_count == 2


def test_a_replay_that_raises_leaves_the_variables_as_they_were() -> None:
    v = tp.variable([1.0, 2.0], name="warm-fragile")

    def step(x: tp.Tensor) -> tp.Tensor:
        v.assign(v + 1.0)
        return tp.run_kernel("Fragile", {"x": x}) + v

    f = warmed(step, tp.tensor([1.0, 1.0]))
    assert v.tolist() == [3.0, 4.0]
    with pytest.raises(tp.KernelError) as warm:
        f(tp.tensor([-1.0, 1.0]))
    assert v.tolist() == [3.0, 4.0]  # no update of a replay that raised
    with pytest.raises(tp.KernelError) as cold:
        general(f, tp.tensor([-1.0, 1.0]))
    assert v.tolist() == [3.0, 4.0]
    assert str(warm.value) == str(cold.value)
    assert f(tp.tensor([1.0, 1.0])).tolist() == [6.0, 7.0]


def test_an_override_scope_a_registration_and_an_observer_are_honoured() -> None:
    f = warmed(gradient, tp.tensor([[0.3, -0.7], [1.1, 0.0]]))
    x = tp.tensor([[0.3, -0.7], [1.1, 0.0]])
    plain = f(x).numpy()
    with tp.gradient_overrides({"Tanh": lambda dy, saved, attrs: (dy * 0.0,)}):
        assert np.all(f(x).numpy() == 0.0)  # the override's gradient, not the warm trace's
    np.testing.assert_array_equal(f(x).numpy(), plain)
    assert "Tanh" in tp.profile(f, x).kernel_names  # an observer sees the replay's kernels
    with pytest.warns(tp.PluginWarning, match="shadows the kernel"):
        tp.register_kernel("Tanh", "numpy", unary(lambda a: np.tanh(a) * 0.0 + 1.0), override=True)
    assert not np.array_equal(f(x).numpy(), plain)  # traced again with the new kernel
    assert f.trace_count == 3  # the first, the one under the override scope, this one


def test_a_replay_that_raises_raises_what_the_general_path_raises() -> None:
    f = warmed(lambda x: tp.run_kernel("Fragile", {"x": x}) + 1.0, tp.tensor([1.0]))
    with pytest.raises(tp.KernelError) as warm:
        f(tp.tensor([-1.0]))
    with pytest.raises(tp.KernelError) as cold:
        general(f, tp.tensor([-1.0]))
    assert str(warm.value) == str(cold.value)


@pytest.fixture(autouse=True)
def _fragile(tensorplug_registries: Any) -> None:
    """A kernel that raises on negative inputs, registered for each test (and undone after it)."""

    def fragile(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        if (inputs["x"] < 0).any():
            raise ValueError("negative input")
        return inputs["x"] * 2.0

    tp.register_kernel("Fragile", "numpy", fragile)


def test_a_registration_made_while_a_call_replays_does_not_leave_a_stale_warm_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tensorplug._tracing import _function

    f = tp.function(mlp)
    x = tp.tensor([[1.0, -2.0]])
    f(x)  # the trace
    replay = f._replay

    def replayed_while_another_thread_registers(entry: Any, leaves: Any) -> Any:
        result = replay(entry, leaves)
        tp.register_kernel("RegisteredMeanwhile", "numpy", lambda inputs, attrs, backend: inputs["x"])
        return result

    monkeypatch.setattr(f, "_replay", replayed_while_another_thread_registers)
    f(x)  # the general path replays the trace made before the registration
    assert f._warm is None or f._warm.version != _function._registry_version
    monkeypatch.undo()
    f(x)
    assert f.trace_count == 2  # the next call traces again, as the general path would
