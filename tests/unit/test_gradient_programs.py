"""Eager backprop replays the core's gradients from programs traced once per signature (a tape's whole backward
pass, or single gradients where the whole pass cannot be): the same bits, and nothing a user can see changes
(errors, overrides, observers, higher orders).

The conformance run through tp.function (tests/unit/test_conformance_traced.py) checks every gradient case from
no program: as written, then traced and replayed as whole passes, then as single gradients: the same bits. These
tests check what must not be replayed, and that what is replayed really is.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._tracing import _gradient_programs as programs


@pytest.fixture(autouse=True)
def _no_programs() -> Any:
    programs.clear()
    yield
    programs.clear()


def loss(x: tp.Tensor, w: tp.Tensor, b: tp.Tensor) -> tp.Tensor:
    return tp.sum(tp.tanh(x * w + b))


def arguments() -> list[tp.Tensor]:
    return [tp.tensor([0.5, -1.0]), tp.tensor([1.5, 0.25]), tp.tensor(0.1)]


def replayed_kernels() -> list[str]:
    """The kernels whose gradient has a program of its own."""
    return sorted(
        entry.program.name.removeprefix("gradient of ")
        for entry in programs._programs.values()
        if isinstance(entry, programs.GradientProgram)
    )


def whole_passes() -> int:
    """How many whole backward passes have a program."""
    return sum(isinstance(entry, programs.BackwardProgram) for entry in programs._programs.values())


def replay_count(monkeypatch: pytest.MonkeyPatch, kind: type) -> list[int]:
    """A counter of the replays of every program of ``kind`` made from now on."""
    count = [0]
    make = kind.__init__

    def counting(self: Any, *args: Any) -> None:
        make(self, *args)
        replay = self.replay

        def counted(*arguments: Any) -> Any:
            count[0] += 1
            return replay(*arguments)

        self.replay = counted

    monkeypatch.setattr(kind, "__init__", counting)
    return count


def test_a_backward_pass_is_traced_at_its_second_sighting_and_replayed_after(monkeypatch: pytest.MonkeyPatch) -> None:
    count = replay_count(monkeypatch, programs.BackwardProgram)
    f = tp.grads(loss)
    written = [g.numpy() for g in f(arguments())]
    assert whole_passes() == 0  # seen once: walked as written
    traced = [g.numpy() for g in f(arguments())]
    assert whole_passes() == 1
    assert count[0] == 0  # the trace walked it as written
    replayed = [g.numpy() for g in f(arguments())]
    assert count[0] == 1
    assert replayed_kernels() == []  # the whole pass served: no single gradient needed a program
    for a, b, c in zip(written, traced, replayed, strict=True):
        assert a.tobytes() == b.tobytes() == c.tobytes()
        assert a.dtype == c.dtype
        assert a.shape == c.shape


@tp.custom_grad
def halved(x: tp.Tensor) -> Any:
    return tp.identity(x), lambda dy: dy * 0.5


def test_single_gradients_are_replayed_where_the_whole_pass_cannot_be(monkeypatch: pytest.MonkeyPatch) -> None:
    """A custom_grad record keeps the pass from being one program: the core's gradients around it replay."""
    count = replay_count(monkeypatch, programs.GradientProgram)
    f = tp.grads(lambda x, w, b: tp.sum(tp.tanh(halved(x) * w + b)))
    results = [[g.numpy() for g in f(arguments())] for _ in range(3)]
    assert whole_passes() == 0
    assert replayed_kernels() == ["Add", "Multiply", "Sum", "Tanh"]
    assert count[0] == 4  # the third call
    for got in results[1:]:
        assert [a.tobytes() for a in got] == [a.tobytes() for a in results[0]]
    np.testing.assert_allclose(
        results[2][0], 0.5 * arguments()[1].numpy() * (1 - np.tanh([0.85, -0.15]) ** 2), rtol=1e-6
    )


def test_the_seed_is_made_inside_the_program_unless_dy_is_given() -> None:
    """With no ``dy``, the whole pass's program makes the seed (ones like y) itself: the same bits as the walk."""
    f = tp.grad(lambda x: tp.sum(tp.tanh(x * 2.0)))
    x = tp.tensor([0.5, -1.0])
    got = [f(x).numpy().tobytes() for _ in range(3)]  # as written, traced, replayed
    weighted = [f(x, tp.tensor(3.0)).numpy() for _ in range(3)]
    assert got == [got[0]] * 3
    np.testing.assert_array_equal(weighted[2], weighted[0])
    np.testing.assert_allclose(weighted[0], 3.0 * np.frombuffer(got[0], np.float32), rtol=1e-6)
    texts = [str(entry.program) for entry in programs._programs.values() if isinstance(entry, programs.BackwardProgram)]
    assert sorted("OnesLike(" in text for text in texts) == [False, True]  # given dy: no seed to make


def test_a_new_shape_is_a_new_signature() -> None:
    f = tp.grad(lambda x: tp.sum(tp.tanh(x)))
    for _ in range(2):
        f(tp.tensor([1.0, 2.0]))
    assert whole_passes() == 1
    for _ in range(3):
        g = f(tp.tensor([[1.0], [2.0], [3.0]]))
    assert g.shape == (3, 1)
    assert whole_passes() == 2
    np.testing.assert_allclose(g.numpy()[:, 0], 1 - np.tanh(np.array([1.0, 2.0, 3.0], np.float32)) ** 2, rtol=1e-6)


def test_an_argument_twice_and_an_output_that_is_an_argument() -> None:
    x = tp.tensor([1.5])
    twice = tp.grads(lambda a, b: tp.sum(a * b))
    itself = tp.grad(lambda a: a)
    for _ in range(3):
        assert [g.tolist() for g in twice([x, x])] == [[3.0], [3.0]]  # the same tensor: both uses add up
        assert itself(x).tolist() == [1.0]


def test_a_user_gradient_runs_as_written_every_time(tensorplug_registries: Any) -> None:
    calls = []

    @tp.register_gradient("Tanh", outputs_to_save=[0], override=True)
    def counted_tanh(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        calls.append(1)
        (y,) = saved
        return (dy * (1.0 - y * y),)

    f = tp.grad(lambda x: tp.sum(tp.tanh(x)))
    for _ in range(3):
        f(tp.tensor([0.5]))
    assert len(calls) == 3
    assert "Tanh" not in replayed_kernels()


def test_a_scoped_override_runs_as_written_every_time() -> None:
    calls = []

    def doubled(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        calls.append(1)
        return (dy * 2.0,)

    f = tp.grad(lambda x: tp.sum(tp.neg(x)))
    for _ in range(3):
        assert f(tp.tensor([1.0])).tolist() == [-1.0]
    with tp.gradient_overrides({"Neg": doubled}):
        for _ in range(3):
            assert f(tp.tensor([1.0])).tolist() == [2.0]
    assert len(calls) == 3
    assert f(tp.tensor([1.0])).tolist() == [-1.0]


def test_a_kernel_registered_later_is_called_by_the_next_backprop(tensorplug_registries: Any) -> None:
    f = tp.grad(lambda x: tp.sum(tp.tanh(x)))
    for _ in range(3):
        f(tp.tensor([0.5]))
    assert whole_passes() == 1
    calls = []

    @tp.register_kernel("Sub", "numpy", override=True)
    def counted_sub(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return np.subtract(inputs["a"], inputs["b"])

    assert whole_passes() == 0  # a registry change forgets every program
    for _ in range(3):
        f(tp.tensor([0.5]))
    assert len(calls) == 3  # the Tanh gradient's 1 - y*y, as written, traced, replayed


def test_a_gradient_that_does_not_fit_its_input_raises_every_time(tensorplug_registries: Any) -> None:
    """The shape check that replays skip is made when a signature is traced: a result that fails it keeps the
    gradient running as written, so the error comes at every call."""

    @tp.register_kernel("Square", "numpy", override=True)
    def broadcasting_square(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return np.square(inputs["x"])

    @tp.register_kernel("Multiply", "numpy", override=True)
    def widening_multiply(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        product = np.multiply(inputs["a"], inputs["b"])
        return np.concatenate([product, product]) if product.shape == (1,) else product

    f = tp.grad(lambda x: tp.sum(tp.square(x)))
    for _ in range(3):
        with pytest.raises(tp.GradientError, match="must match its input's shape and dtype"):
            f(tp.tensor([3.0]))
    assert "Square" not in replayed_kernels()
    assert whole_passes() == 0


def test_a_replay_that_fails_runs_the_gradient_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    f = tp.grads(loss)
    expected = [g.numpy() for g in f(arguments())]
    f(arguments())
    assert whole_passes() == 1

    def broken(*args: Any) -> Any:
        raise RuntimeError("boom")

    for entry in programs._programs.values():
        if isinstance(entry, programs.BackwardProgram | programs.GradientProgram):
            monkeypatch.setattr(entry, "replay", broken)
    for got, want in zip(f(arguments()), expected, strict=True):
        assert got.numpy().tobytes() == want.tobytes()


def test_observers_see_every_gradient_kernel_after_the_programs_are_made() -> None:
    f = tp.grads(loss)
    before = tp.profile(f, arguments()).kernel_names
    for _ in range(3):
        f(arguments())
    assert whole_passes() == 1
    assert tp.profile(f, arguments()).kernel_names == before
    assert "Sub" in before  # the Tanh gradient's kernels, seen one by one


def test_higher_orders_are_recorded_after_the_programs_are_made() -> None:
    d2 = tp.grad(tp.grad(lambda x: tp.sum(x * x * x)))
    for _ in range(3):
        assert d2(tp.tensor([2.0])).tolist() == [12.0]
    d1 = tp.grad(lambda x: tp.sum(x * x * x))
    for _ in range(3):
        assert d1(tp.tensor([2.0])).tolist() == [12.0]
    assert tp.grad(tp.grad(lambda x: tp.sum(x * x * x)))(tp.tensor([2.0])).tolist() == [12.0]


def test_a_traced_function_still_records_every_gradient_kernel() -> None:
    f = tp.grads(loss)
    for _ in range(3):
        f(arguments())
    traced = tp.function(f)
    program = traced.program(arguments())
    kernels = [step.kernel for step in program.kernel_steps]
    assert "Sub" in kernels
    assert "Square" in kernels
    for got, want in zip(traced(arguments()), f(arguments()), strict=True):
        assert got.numpy().tobytes() == want.numpy().tobytes()


def test_integer_inputs_get_no_gradient_and_unconnected_ones_none() -> None:
    def f(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        return tp.sum(x * tp.cast(tp.tensor([2, 3]), "float32"))

    grads = tp.grads(f, unconnected_gradients="zero")
    for _ in range(3):
        dx, dy = grads([tp.tensor([1.0, 1.0]), tp.tensor([5.0])])
        assert dx.tolist() == [2.0, 3.0]
        assert dy.tolist() == [0.0]


def test_softmax_cross_entropy_gradient_is_replayed_with_the_same_bits(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(0)
    labels = tp.tensor(np.eye(4, dtype=np.float32)[rng.integers(0, 4, 6)])
    logits = tp.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    f = tp.grads(tp.losses.softmax_cross_entropy)
    got = [[g.numpy() for g in f([labels, logits])] for _ in range(3)]
    assert whole_passes() == 1
    monkeypatch.setattr(programs, "WHOLE_PASSES", False)
    got += [[g.numpy() for g in f([labels, logits])] for _ in range(2)]
    assert "SoftmaxCrossEntropyWithLogits" in replayed_kernels()
    for g in got[1:]:
        assert [a.tobytes() for a in g] == [a.tobytes() for a in got[0]]
    softmax = np.exp(logits.numpy()) / np.exp(logits.numpy()).sum(-1, keepdims=True)
    np.testing.assert_allclose(got[2][1], (softmax - labels.numpy()) / 6, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got[2][0], -np.log(softmax) / 6, rtol=1e-5)


def test_softmax_cross_entropy_has_a_second_derivative() -> None:
    """The fused gradient is written with ops on the recorded log-probabilities: differentiating it again gives
    the Hessian of the composed formula, softmax's Jacobian."""
    labels = tp.tensor([[0.0, 1.0, 0.0]])
    logits = tp.tensor([[0.5, -1.0, 2.0]])
    v = tp.tensor([[1.0, 2.0, -1.0]])

    def fused(z: tp.Tensor) -> tp.Tensor:
        return tp.sum(tp.grad(lambda z: tp.losses.softmax_cross_entropy(labels, z))(z) * v)

    def composed(z: tp.Tensor) -> tp.Tensor:
        loss = lambda z: -tp.sum(labels * tp.log_softmax(z, -1))
        return tp.sum(tp.grad(loss)(z) * v)

    for _ in range(3):
        np.testing.assert_allclose(tp.grad(fused)(logits).numpy(), tp.grad(composed)(logits).numpy(), rtol=1e-5)


def test_softmax_cross_entropy_records_log_softmax_and_itself_alone() -> None:
    """Its value's ops are not recorded (its own record gives the gradient); log_softmax is, as one record, for the
    fused gradient to be differentiated again."""
    from tensorplug._autodiff._backward import _Scope

    logits = tp.tensor([[0.5, -1.0, 2.0]])
    with _Scope([logits]) as scope:
        tp.losses.softmax_cross_entropy(tp.tensor([[0.0, 1.0, 0.0]]), logits, reduction="none")
    assert [record.kernel_name for record in scope.tape.records] == ["LogSoftmax", "SoftmaxCrossEntropyWithLogits"]


def _composed_log_softmax(x: tp.Tensor, axis: int) -> tp.Tensor:
    """log_softmax written with ops, as the record's gradient must differentiate it."""
    shifted = x - tp.stop_gradient(tp.max(x, axis, keepdims=True))
    return shifted - tp.log(tp.sum(tp.exp(shifted), axis, keepdims=True))


@pytest.mark.parametrize("axis", [0, -1])
def test_log_softmax_is_one_record_with_the_gradients_of_its_ops(monkeypatch: pytest.MonkeyPatch, axis: int) -> None:
    from tensorplug._autodiff._backward import _Scope

    x = tp.tensor(np.random.default_rng(1).standard_normal((3, 4)))
    w = tp.tensor(np.arange(12.0).reshape(3, 4))
    with _Scope([x]) as scope:
        tp.log_softmax(x, axis)
    assert [record.kernel_name for record in scope.tape.records] == ["LogSoftmax"]

    def fused(z: tp.Tensor) -> tp.Tensor:
        return tp.sum(tp.log_softmax(z, axis) * w)

    def composed(z: tp.Tensor) -> tp.Tensor:
        return tp.sum(_composed_log_softmax(z, axis) * w)

    expected = tp.grad(composed)(x).numpy()
    got = [tp.grad(fused)(x).numpy() for _ in range(3)]  # as written, traced, replayed as a whole pass
    monkeypatch.setattr(programs, "WHOLE_PASSES", False)
    got += [tp.grad(fused)(x).numpy() for _ in range(2)]  # the record's own program
    assert "LogSoftmax" in replayed_kernels()
    for g in got:
        assert g.tobytes() == got[0].tobytes()
    np.testing.assert_allclose(got[0], expected, rtol=1e-12, atol=1e-12)
    second = tp.grad(lambda z: tp.sum(tp.grad(fused)(z) ** 2))(x).numpy()
    np.testing.assert_allclose(second, tp.grad(lambda z: tp.sum(tp.grad(composed)(z) ** 2))(x).numpy(), rtol=1e-10)


def test_threads_share_the_programs_and_get_their_own_gradients() -> None:
    import threading

    f = tp.grads(loss)
    inputs = [[tp.tensor([0.1 * i, -0.2 * i]), tp.tensor([1.5, 0.25 * i]), tp.tensor(0.1 * i)] for i in range(4)]
    expected = [[g.numpy().tobytes() for g in f(args)] for args in inputs]  # as written (first sightings)
    start = threading.Barrier(4)
    got: dict[int, list[list[bytes]]] = {}

    def run(i: int) -> None:
        start.wait()
        got[i] = [[g.numpy().tobytes() for g in f(inputs[i])] for _ in range(5)]

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert whole_passes() == 1  # one signature for all four
    for i in range(4):
        assert got[i] == [expected[i]] * 5
