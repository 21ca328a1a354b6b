"""What the gradient programs may never get wrong: a program is kept only if the kernels and gradients it was
traced with are still the registered ones, its signature tells apart every attr value that the kernels tell
apart, gradients go to the inputs they belong to whatever the order of the inputs dict, a Variable assigned after
an op read it never gives a gradient of the new value, and whether a gradient is replayed is declared by its spec.

Every check runs a signature five times: seen once (walked as written), traced, then replayed.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._runtime._state import state
from tensorplug._tracing import _gradient_programs as programs
from tensorplug._tracing._signature import attrs_key, static_key

CALLS = 5


@pytest.fixture(autouse=True)
def _no_programs() -> Any:
    programs.clear()
    yield
    programs.clear()


def whole_passes() -> int:
    return sum(isinstance(entry, programs.BackwardProgram) for entry in programs._programs.values())


# -- a registration while a program is traced --------------------------------------------------------------------


def test_a_program_traced_across_a_registration_is_not_kept(tensorplug_registries: Any) -> None:
    """Thread A traces the backward pass of sum(exp(t) * t) with one Multiply kernel; while it traces, the main
    thread registers a Multiply that doubles its product. Every later gradient is the new kernel's."""
    tracing = threading.Event()
    registered = threading.Event()
    block = threading.Event()

    @tp.register_kernel("Multiply", "numpy", override=True)
    def waiting_multiply(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        if block.is_set() and state.tracer is not None:  # thread A's trace of the backward pass
            tracing.set()
            assert registered.wait(10)
        return np.multiply(inputs["a"], inputs["b"])

    f = tp.grad(lambda t: tp.sum(tp.exp(t) * t))
    x = np.array([1.0, 2.0], np.float32)
    got: list[np.ndarray] = []
    failures: list[BaseException] = []

    def thread_a() -> None:
        try:
            f(tp.tensor(x))  # seen once: walked as written
            block.set()
            f(tp.tensor(x))  # seen twice: traced, and the trace waits for the registration
            block.clear()
            got.extend(f(tp.tensor(x)).numpy() for _ in range(CALLS))
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)
            tracing.set()

    a = threading.Thread(target=thread_a)
    a.start()
    assert tracing.wait(10)

    @tp.register_kernel("Multiply", "numpy", override=True)
    def doubled_multiply(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return 2.0 * np.multiply(inputs["a"], inputs["b"])

    registered.set()
    a.join(10)
    assert not a.is_alive()
    assert not failures, failures
    # With the doubled Multiply: y = 2 e^t t; the Multiply's gradient 2 t and 2 e^t, the Exp's 2 (2 t) e^t.
    expected = np.exp(x.astype(np.float64)) * (2.0 + 4.0 * x)
    assert len(got) == CALLS
    for g in got:
        np.testing.assert_allclose(g, expected, rtol=1e-5)


# -- attrs in the signature ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_signed_zero_attrs_are_two_signatures(backend: str) -> None:
    if backend == "torch":
        pytest.importorskip("torch")
    tp.set_backend(backend)
    positive = tp.grad(lambda t: tp.sum(tp.leaky_relu(t, alpha=0.0)))
    negative = tp.grad(lambda t: tp.sum(tp.leaky_relu(t, alpha=-0.0)))
    for _ in range(CALLS):
        g = positive(tp.tensor([-1.0])).numpy()
        assert g[0] == 0.0
        assert not np.signbit(g[0])
    for _ in range(CALLS):
        g = negative(tp.tensor([-1.0])).numpy()
        assert g[0] == 0.0
        assert np.signbit(g[0])


def test_attr_keys_tell_apart_what_numpy_computes_differently() -> None:
    nan = float("nan")
    other_nan = np.frombuffer(np.array([0x7FF8000000000001], np.uint64).tobytes(), np.float64)[0].item()
    distinct = [
        {"alpha": 0.0},
        {"alpha": -0.0},
        {"alpha": nan},
        {"alpha": other_nan},
        {"alpha": np.float32(1.0)},
        {"alpha": np.float64(1.0)},
        {"alpha": 1.0},
        {"alpha": 1},
        {"alpha": True},
        {"alpha": (0.0, 1)},
        {"alpha": (-0.0, 1)},
        {"alpha": [0.0, 1]},
        {"alpha": (1, 2)},
        {"alpha": (True, 2)},
        {"alpha": (1.0, 2)},
        {"alpha": (np.int64(1), 2)},
        {"alpha": [1, 2]},
        {"alpha": ()},
        {"alpha": "1"},
        {"alpha": None},
        {"alpha": 0},
        {"alpha": False},
    ]
    keys = [attrs_key(attrs) for attrs in distinct]
    assert len(set(keys)) == len(distinct)
    assert attrs_key({"axis": (1, 0), "keep_dims": True}) == attrs_key({"axis": (1, 0), "keep_dims": True})
    assert attrs_key({"axis": (1, 0)}) != attrs_key({"axes": (1, 0)})  # the attr's name is part of its key
    assert attrs_key({"alpha": float("nan")}) == attrs_key({"alpha": float("nan")})  # a NaN's bits, not its object
    assert attrs_key({"alpha": {"a": 1}}) is None  # not hashable: no program
    assert attrs_key({"alpha": -0.0}) == (("alpha", static_key("f", -0.0, "alpha")),)  # tp.function's key


# -- the order of the inputs dict ----------------------------------------------------------------------------------


@pytest.mark.parametrize("whole", [True, False])
def test_gradients_go_to_inputs_by_name_whatever_the_dict_order(monkeypatch: pytest.MonkeyPatch, whole: bool) -> None:
    monkeypatch.setattr(programs, "WHOLE_PASSES", whole)
    c = tp.tensor([4.0])
    x = tp.tensor([2.0])
    sub_a = tp.grad(lambda t: tp.sum(tp.run_kernel("Sub", {"b": c, "a": t})))
    sub_b = tp.grad(lambda t: tp.sum(tp.run_kernel("Sub", {"b": t, "a": c})))
    div_a = tp.grad(lambda t: tp.sum(tp.run_kernel("RealDiv", {"b": c, "a": t})))
    div_b = tp.grad(lambda t: tp.sum(tp.run_kernel("RealDiv", {"b": t, "a": c})))
    both = tp.grads(lambda a, b: tp.sum(tp.run_kernel("RealDiv", {"b": b, "a": a})))
    for _ in range(CALLS):
        assert sub_a(x).tolist() == [1.0]
        assert sub_b(x).tolist() == [-1.0]
        assert div_a(x).tolist() == [0.25]  # d(t / 4) = 1/4
        assert div_b(x).tolist() == [-1.0]  # d(4 / t) = -4 / t^2
        assert [g.tolist() for g in both([tp.tensor([2.0]), tp.tensor([4.0])])] == [[0.25], [-0.125]]


def test_gradients_go_to_inputs_by_name_under_tp_function() -> None:
    c = tp.tensor([4.0])
    step = tp.function(lambda t: tp.grad(lambda u: tp.sum(tp.run_kernel("RealDiv", {"b": u, "a": c})))(t))
    for _ in range(CALLS):
        assert step(tp.tensor([2.0])).tolist() == [-1.0]  # traced once, then replayed


# -- a Variable assigned after an op read it ----------------------------------------------------------------------


def _assigning(w: tp.Variable) -> Any:
    def f(t: tp.Tensor) -> tp.Tensor:
        y = t * w
        w.assign([100.0])
        return tp.sum(y)

    return f


def test_assigning_a_variable_an_op_read_while_recording_raises() -> None:
    w = tp.variable([2.0], name="w_read")
    f = tp.grad(_assigning(w))
    for _ in range(CALLS):
        with pytest.raises(tp.GradientError, match=r"Variable 'w_read'.*'Multiply'"):
            f(tp.tensor([3.0]))
        assert w.tolist() == [2.0]  # not assigned: the error comes first
    assert tp.grad(lambda t: tp.sum(t * w))(tp.tensor([3.0])).tolist() == [2.0]


def test_assigning_a_watched_variable_an_op_read_raises() -> None:
    w = tp.variable([2.0], name="w_watched")

    def loss() -> tp.Tensor:
        y = w * w
        w.assign([100.0])
        return tp.sum(y)

    for _ in range(CALLS):
        with pytest.raises(tp.GradientError, match="w_watched"):
            tp.variable_grads(loss, [w])
    assert w.tolist() == [2.0]


def test_assigning_a_read_variable_raises_under_tp_function() -> None:
    w = tp.variable([2.0], name="w_traced")
    step = tp.function(lambda t: tp.grad(_assigning(w))(t))
    for _ in range(CALLS):
        with pytest.raises(tp.GradientError, match="w_traced"):
            step(tp.tensor([3.0]))
    assert w.tolist() == [2.0]


def test_assigning_a_variable_no_recorded_op_read_is_allowed() -> None:
    w = tp.variable([2.0], name="w_unread")
    v = tp.variable([5.0], name="v_read")

    def f(t: tp.Tensor) -> tp.Tensor:
        y = t * v
        w.assign(w * 3.0)  # no watched tensor: nothing recorded reads w
        return tp.sum(y)

    for _ in range(CALLS):
        assert tp.grad(f)(tp.tensor([3.0])).tolist() == [5.0]
    v.assign([7.0])  # after the gradient: nothing records
    assert w.tolist() == [2.0 * 3.0**CALLS]


# -- whether a gradient is replayed -------------------------------------------------------------------------------


def test_a_scoped_override_named_as_the_core_runs_as_written_every_time() -> None:
    scale = [2.0]

    def scaled(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return (dy * scale[0],)

    f = tp.grad(lambda x: tp.sum(tp.neg(x)))
    with tp.gradient_overrides({"Neg": scaled}, source="tensorplug"):
        for _ in range(CALLS):
            assert f(tp.tensor([1.0])).tolist() == [2.0]
        scale[0] = 5.0
        for _ in range(CALLS):
            assert f(tp.tensor([1.0])).tolist() == [5.0]


def test_a_scope_replays_what_declares_replay_and_runs_the_rest_as_written() -> None:
    from tensorplug._runtime._registry import gradient_registry

    core = gradient_registry.get("Neg")
    assert core is not None
    assert core.replay  # declared by the core's plugin hook: replayed
    with tp.gradient_overrides({"Neg": core}, source="tensorplug") as scope:
        assert scope.specs["Neg"].replay  # what a spec declares holds in a scope too
    undeclared = dataclasses.replace(core, replay=None)
    written = dataclasses.replace(core, replay=False)
    with tp.gradient_overrides({"Neg": undeclared, "Exp": lambda dy, saved, attrs: (dy,)}) as scope:
        assert scope.specs["Neg"].replay is False  # a scope's default: as written
        assert scope.specs["Exp"].replay is False
    with tp.gradient_overrides({"Neg": undeclared, "Exp": lambda dy, saved, attrs: (dy,)}, replay=True) as scope:
        assert scope.specs["Neg"].replay is True
        assert scope.specs["Exp"].replay is True
    with tp.gradient_overrides({"Neg": written}, replay=True) as scope:
        assert scope.specs["Neg"].replay is False


def test_the_core_gradients_are_replayed() -> None:
    f = tp.grad(lambda x: tp.sum(tp.neg(x)))
    for _ in range(3):
        f(tp.tensor([1.0]))
    assert whole_passes() == 1


def test_a_runtime_gradient_is_replayed_when_it_declares_replay(tensorplug_registries: Any) -> None:
    def triple_neg(dy: Any, saved: Any, attrs: Any) -> Any:
        calls.append(1)
        return (tp.neg(dy) * 3.0,)

    calls: list[int] = []
    tp.register_gradient("Neg", triple_neg, override=True)
    assert tp.get_gradient("Neg").replay is False  # registered at runtime: as written by default
    f = tp.grad(lambda x: tp.sum(tp.neg(x)))
    for _ in range(4):
        assert f(tp.tensor([1.0, 2.0])).tolist() == [-3.0, -3.0]
    assert len(calls) == 4  # its Python ran at every backprop

    calls.clear()
    tp.register_gradient("Neg", triple_neg, override=True, replay=True)
    assert tp.get_gradient("Neg").replay is True
    for _ in range(4):
        assert f(tp.tensor([1.0, 2.0])).tolist() == [-3.0, -3.0]
    assert len(calls) < 4  # traced, then replayed: its Python no longer runs at every backprop


def test_a_gradient_registered_after_a_replay_is_called_by_the_next_backprop(tensorplug_registries: Any) -> None:
    """What a backward pass looked up of the registry (which gradient each kernel has, whether it is replayed) is
    forgotten when a gradient is registered: the next backprop calls the new one, as written."""
    f = tp.grad(lambda x: tp.sum(tp.neg(x)))
    for _ in range(3):  # as written, traced, replayed
        assert f(tp.tensor([1.0, 2.0])).tolist() == [-1.0, -1.0]
    calls: list[int] = []

    def triple_neg(dy: Any, saved: Any, attrs: Any) -> Any:
        calls.append(1)
        return (tp.neg(dy) * 3.0,)

    tp.register_gradient("Neg", triple_neg, override=True)
    for _ in range(3):
        assert f(tp.tensor([1.0, 2.0])).tolist() == [-3.0, -3.0]
    assert len(calls) == 3
