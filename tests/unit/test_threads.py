"""Threads: per-thread autodiff state, registries read while another thread writes them, and many
threads computing gradients at once getting exactly what a serial run gets.

Interleavings that matter are forced with barriers and events where a
test can name them; the stress tests shrink the interpreter's switch
interval so that threads change as often as possible.
"""

from __future__ import annotations

import sys
import threading
import types
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._runtime._registry import gradient_registry, kernel_registry
from tensorplug._runtime._state import state
from tensorplug._runtime._variable import live_variables

TIMEOUT = 30.0  # seconds a barrier or a join may wait before the test fails instead of hanging


def run_threads(*targets: Callable[[], None], barriers: Sequence[threading.Barrier] = ()) -> None:
    """Run each target in its own thread, wait for all, and re-raise the first real error of any.

    A thread that fails breaks ``barriers``, so that the others stop waiting for it.
    """
    errors: list[BaseException] = []

    def guarded(target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except BaseException as exc:
                errors.append(exc)
                for barrier in barriers:
                    barrier.abort()

        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(2 * TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    # A thread that failed breaks the barriers of the others: report its error, not theirs.
    errors.sort(key=lambda exc: isinstance(exc, threading.BrokenBarrierError))
    if errors:
        raise errors[0]


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Let the interpreter switch threads as often as it can, so that races have every chance to show."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def doubled_relu(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
    (x,) = saved
    return (tp.where(x > 0, dy * 2.0, tp.zeros_like(dy)),)


def relu_sum(x: tp.Tensor) -> tp.Tensor:
    return tp.sum(tp.relu(x))


X = [-1.0, 2.0, 3.0]


# -- per-thread state ------------------------------------------------------------


def test_each_thread_sees_only_its_own_tape_overrides_and_no_grad() -> None:
    """Four threads sit at once inside no_grad, an override scope, a recording tape, and nothing;
    each sees only its own state, and each computes the gradients its own state implies."""
    inside = threading.Barrier(4, timeout=TIMEOUT)
    done = threading.Barrier(4, timeout=TIMEOUT)
    x = tp.tensor(X)

    def in_no_grad() -> None:
        with tp.no_grad():
            inside.wait()
            assert state.tape is None
            assert state.overrides is None
            y = x * x
            assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]  # a gradient scope still records inside
            done.wait()
        assert y._tape is None

    def in_override_scope() -> None:
        with tp.gradient_overrides({"Relu": doubled_relu}):
            inside.wait()
            assert state.tape is None
            assert tp.get_gradient("Relu").source == "scope"  # type: ignore[union-attr]
            assert tp.grad(relu_sum)(x).tolist() == [0.0, 2.0, 2.0]
            done.wait()

    def on_a_tape() -> None:
        def f(x: tp.Tensor) -> tp.Tensor:
            inside.wait()
            assert state.tape is not None
            assert state.overrides is None
            y = relu_sum(x)
            done.wait()
            return y

        assert tp.grad(f)(x).tolist() == [0.0, 1.0, 1.0]
        assert state.tape is None

    def plain() -> None:
        inside.wait()
        assert state.tape is None
        assert state.overrides is None
        assert state.gradient_of is None
        assert tp.get_gradient("Relu").source == "tensorplug"  # type: ignore[union-attr]
        assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]
        done.wait()

    run_threads(in_no_grad, in_override_scope, on_a_tape, plain, barriers=[inside, done])


def test_one_no_grad_object_shared_by_two_threads() -> None:
    """Entering the same no_grad object in two threads: each restores its own tape on exit."""
    shared = tp.no_grad()
    steps = threading.Barrier(2, timeout=TIMEOUT)
    x = tp.tensor(X)

    def first(x: tp.Tensor) -> tp.Tensor:
        mine = state.tape
        with shared:
            steps.wait()  # 1: both on their tapes, this one inside `shared`
            steps.wait()  # 2: the other thread entered `shared` too
        assert state.tape is mine
        steps.wait()  # 3
        return relu_sum(x)

    def second(x: tp.Tensor) -> tp.Tensor:
        mine = state.tape
        steps.wait()  # 1
        with shared:
            steps.wait()  # 2
            steps.wait()  # 3: the other thread left `shared`
        assert state.tape is mine
        return relu_sum(x)

    run_threads(lambda: tp.grad(first)(x), lambda: tp.grad(second)(x), barriers=[steps])


def test_one_override_scope_object_shared_by_two_threads() -> None:
    """The same gradient_overrides object entered in two threads: each gets its own outer scope back."""
    shared = tp.gradient_overrides({"Relu": doubled_relu})
    steps = threading.Barrier(2, timeout=TIMEOUT)
    x = tp.tensor(X)

    def first() -> None:
        with shared:
            steps.wait()  # 1
            steps.wait()  # 2: the other thread entered `shared` inside a scope of its own
        assert state.overrides is None
        assert tp.grad(relu_sum)(x).tolist() == [0.0, 1.0, 1.0]
        steps.wait()  # 3

    def second() -> None:
        with tp.gradient_overrides({"Exp": None}):
            outer = state.overrides
            steps.wait()  # 1
            with shared:
                steps.wait()  # 2
                steps.wait()  # 3: the other thread left `shared`
            assert state.overrides is outer

    run_threads(first, second, barriers=[steps])


def test_one_no_grad_object_entered_twice_in_one_thread() -> None:
    """Re-entering a no_grad object that is already active leaves the tape as it found it."""
    once = tp.no_grad()

    def f(x: tp.Tensor) -> tp.Tensor:
        with once, once:
            pass
        return relu_sum(x)

    assert tp.grad(f)(tp.tensor(X)).tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("kind", ["tensor", "variable"])
def test_two_threads_differentiate_with_respect_to_the_same_tensor(kind: str) -> None:
    """Both threads start a gradient scope watching one shared tensor before either computes."""
    shared = tp.tensor(X) if kind == "tensor" else tp.variable(X, name="shared_by_threads")
    both_watching = threading.Barrier(2, timeout=TIMEOUT)
    results: dict[str, list[float]] = {}

    def f(x: tp.Tensor) -> tp.Tensor:
        both_watching.wait()
        return tp.sum(x * x)

    def by_grad() -> None:
        results["grad"] = tp.grad(f)(shared).tolist()

    def by_variable_grads() -> None:
        if kind == "tensor":
            results["other"] = tp.grad(f)(shared).tolist()
        else:
            assert isinstance(shared, tp.Variable)
            _value, grads = tp.variable_grads(lambda: f(shared), [shared])
            results["other"] = grads["shared_by_threads"].tolist()

    run_threads(by_grad, by_variable_grads, barriers=[both_watching])
    assert results == {"grad": [-2.0, 4.0, 6.0], "other": [-2.0, 4.0, 6.0]}


# -- registries read while another thread writes them ----------------------------


def plus_one(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"] + 1


def plus_two(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return inputs["x"] + 2


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_registration_wins_over_a_dispatch_that_was_resolving_meanwhile(monkeypatch: pytest.MonkeyPatch) -> None:
    """A thread resolves a lazy kernel; meanwhile another registers a replacement. Once the
    registration has returned, dispatch runs the replacement, not what the slow thread resolved."""
    resolving, go_on = threading.Event(), threading.Event()
    module = types.ModuleType("tp_threads_lazy_kernels")

    def lazy_attribute(name: str) -> Any:
        if name != "slow_plus_one":
            raise AttributeError(name)
        resolving.set()
        assert go_on.wait(TIMEOUT)
        return plus_one

    module.__getattr__ = lazy_attribute  # type: ignore[method-assign]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    x = tp.tensor([1.0])
    tp.register_kernel("ThreadProbe", "numpy", f"{module.__name__}:slow_plus_one")
    try:
        first: list[Any] = []
        slow = threading.Thread(target=lambda: first.append(tp.run_kernel("ThreadProbe", {"x": x}).tolist()))
        slow.start()
        assert resolving.wait(TIMEOUT)
        tp.register_kernel("ThreadProbe", "numpy", plus_two, override=True)
        go_on.set()
        slow.join(TIMEOUT)
        assert first == [[2.0]]  # it started before the registration: the old kernel is fine for it
        assert tp.run_kernel("ThreadProbe", {"x": x}).tolist() == [3.0]
    finally:
        go_on.set()


@pytest.mark.usefixtures("tensorplug_registries")
def test_registering_the_same_function_again_leaves_no_moment_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Re-registering a kernel or gradient (a notebook cell run again) replaces it in one step: a
    reader at any moment in between (here, a change listener, called at each step) sees one of them."""
    seen: list[Any] = []

    def spy(key: Any) -> None:
        if key == ("ThreadProbe", "numpy"):
            seen.append(kernel_registry.get(key))
        if key == "ThreadProbe":
            seen.append(gradient_registry.get(key))

    monkeypatch.setattr(kernel_registry, "_listeners", [*kernel_registry._listeners, spy])
    monkeypatch.setattr(gradient_registry, "_listeners", [*gradient_registry._listeners, spy])
    tp.register_kernel("ThreadProbe", "numpy", plus_one)
    tp.register_gradient("ThreadProbe", doubled_relu)
    tp.register_kernel("ThreadProbe", "numpy", plus_one)
    tp.register_gradient("ThreadProbe", doubled_relu)
    assert len(seen) >= 4
    assert None not in seen
    assert tp.run_kernel("ThreadProbe", {"x": tp.tensor([1.0])}).tolist() == [2.0]


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_is_not_dispatched_before_its_setup_has_run() -> None:
    """register_kernel with a setup on an initialised backend: while the setup runs (in another
    thread), dispatching the kernel finds no kernel rather than one whose setup has not run."""
    setting_up, go_on = threading.Event(), threading.Event()
    ready: list[bool] = []

    def setup(backend: Any) -> None:
        setting_up.set()
        assert go_on.wait(TIMEOUT)
        ready.append(True)

    def needs_setup(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        assert ready, "the kernel ran before its setup"
        return inputs["x"] + 1

    registering = threading.Thread(target=lambda: tp.register_kernel("ThreadProbe", "numpy", needs_setup, setup=setup))
    registering.start()
    try:
        assert setting_up.wait(TIMEOUT)
        with pytest.raises(tp.KernelNotFoundError):
            tp.run_kernel("ThreadProbe", {"x": tp.tensor([1.0])})
        go_on.set()
        registering.join(TIMEOUT)
        assert tp.run_kernel("ThreadProbe", {"x": tp.tensor([1.0])}).tolist() == [2.0]
    finally:
        go_on.set()
        registering.join(TIMEOUT)


def test_listing_backends_while_another_thread_removes_one() -> None:
    """A backend's priority function runs (so listing is under way) while another thread removes a
    backend; listing still returns, with or without the removed one."""
    asked, go_on = threading.Event(), threading.Event()

    def slow_priority() -> int:
        asked.set()
        assert go_on.wait(TIMEOUT)
        return 100  # above every real backend

    tp.register_backend("thread_slow", lambda: None, slow_priority)
    tp.register_backend("thread_gone", lambda: None, 1)
    listed: list[list[str]] = []
    try:
        lister = threading.Thread(target=lambda: listed.append(tp.list_backends()))
        lister.start()
        assert asked.wait(TIMEOUT)
        tp.remove_backend("thread_gone")
        go_on.set()
        lister.join(TIMEOUT)
        assert len(listed) == 1, "list_backends raised in the other thread"
        assert listed[0][0] == "thread_slow"
        assert "numpy" in listed[0]
    finally:
        go_on.set()
        tp.remove_backend("thread_slow")


def test_variable_grads_of_every_variable_while_another_thread_makes_variables(fast_switching: None) -> None:
    """variable_grads() with no list (every live variable) while another thread keeps creating them."""
    w = tp.variable(X, name="thread_w")
    others = [tp.variable([0.0], trainable=False) for _ in range(300)]  # a listing long enough to be interrupted
    making = threading.Event()
    making.set()
    count: list[int] = []

    def maker() -> None:
        try:
            for _ in range(20_000):
                tp.variable([0.0], trainable=False)
        finally:
            making.clear()

    def differentiating() -> None:
        n = 0
        while making.is_set():
            assert tp.variable_grads(lambda: tp.sum(w * w)).grads["thread_w"].tolist() == [-2.0, 4.0, 6.0]
            n += 1
        count.append(n)

    run_threads(maker, differentiating)
    assert count[0] > 0
    del others


@pytest.mark.usefixtures("tensorplug_registries")
def test_readers_never_fail_while_another_thread_registers(fast_switching: None) -> None:
    """Dispatching, gradient lookups, coverage, iterating the registries and listing backends and
    variables, while one thread registers and removes kernels, gradients, backends, gradient sets
    and variables in a loop: nothing raises, every dispatch runs a whole kernel (the one registered
    throughout, or the override pushed over it), and the last registration is the one that runs."""
    tp.register_kernel("ThreadProbe", "numpy", plus_one)
    tp.register_gradient("ThreadProbe", doubled_relu)
    writing = threading.Event()
    writing.set()
    x = tp.tensor(X)
    expected_grad = tp.grad(relu_sum)(x).tolist()
    reads: list[str] = []

    def writer() -> None:
        try:
            for i in range(2000):
                tp.register_kernel("ThreadProbe", "numpy", plus_one)  # the same function again: replaces it
                tp.register_kernel("ThreadProbe", "numpy", plus_two, override=True)
                tp.register_gradient("ThreadProbe", doubled_relu)
                tp.register_backend("thread_ghost", lambda: None, lambda: 1)
                tp.register_gradient_set("thread_set", lambda: [], "a set that comes and goes")
                keep = tp.variable([float(i)], name=f"thread_var_{i}")
                tp.unregister_kernel("ThreadProbe", "numpy", "runtime")
                tp.remove_backend("thread_ghost")
                tp.unregister_gradient_set("thread_set")
                del keep
        finally:
            writing.clear()

    def dispatching() -> None:
        while writing.is_set():
            assert tp.run_kernel("ThreadProbe", {"x": tp.tensor([1.0])}).tolist() in ([2.0], [3.0])
            assert tp.grad(relu_sum)(x).tolist() == expected_grad
            assert tp.get_gradient("ThreadProbe") is not None
        reads.append("dispatch")

    def listing() -> None:
        while writing.is_set():
            assert "numpy" in tp.list_backends()
            assert any(spec.kernel_name == "Add" for spec in list(kernel_registry))
            assert len(tp.kernels_for_backend("numpy")) > 0
            tp.gradient_sets()
            live_variables()
        reads.append("listing")

    def covering() -> None:
        while writing.is_set():
            assert any(row.kernel == "ThreadProbe" for row in tp.coverage().rows)
        reads.append("coverage")

    run_threads(writer, dispatching, listing, covering)
    assert sorted(reads) == ["coverage", "dispatch", "listing"]
    assert tp.run_kernel("ThreadProbe", {"x": tp.tensor([1.0])}).tolist() == [2.0]


# -- many threads computing gradients --------------------------------------------

THREADS = 8
CALLS = 500


def _job(index: int, shared_w: tp.Tensor) -> Callable[[np.ndarray], list[np.ndarray]]:
    """The gradient computation thread ``index`` repeats, as a function of its per-call input."""

    def elementwise(a: np.ndarray) -> list[np.ndarray]:
        return [tp.grad(lambda x: tp.sum(tp.tanh(x) * tp.exp(x * 0.5)))(tp.tensor(a)).numpy()]

    def matmul(a: np.ndarray) -> list[np.ndarray]:
        gs = tp.grads(lambda x, w: tp.sum(tp.matmul(x, w) ** 2))([tp.tensor(a.reshape(2, 3)), shared_w])
        return [g.numpy() for g in gs]

    def reductions(a: np.ndarray) -> list[np.ndarray]:
        f = lambda x: tp.mean(x) + tp.max(x) + tp.sum(x * x, axis=0)[1]
        value, g = tp.value_and_grad(f)(tp.tensor(a.reshape(2, 3)))
        return [value.numpy(), g.numpy()]

    def override_scope(a: np.ndarray) -> list[np.ndarray]:
        with tp.gradient_overrides({"Relu": doubled_relu}):
            return [tp.grad(lambda x: tp.sum(tp.relu(x) * x))(tp.tensor(a)).numpy()]

    def with_no_grad(a: np.ndarray) -> list[np.ndarray]:
        def f(x: tp.Tensor) -> tp.Tensor:
            with tp.no_grad():
                scale = tp.sin(x) * 2.0  # a constant for the gradient
            return tp.sum(x * scale)

        return [tp.grad(f)(tp.tensor(a)).numpy()]

    def second_order(a: np.ndarray) -> list[np.ndarray]:
        inner = tp.grad(lambda z: tp.sum(z * z * tp.sin(z)))
        return [tp.grad(lambda x: tp.sum(inner(x)))(tp.tensor(a)).numpy()]

    def softmax(a: np.ndarray) -> list[np.ndarray]:
        weights = tp.tensor([1.0, -2.0, 0.5, 3.0, 0.0, 1.5])
        return [tp.grad(lambda x: tp.sum(tp.softmax(x) * weights))(tp.tensor(a)).numpy()]

    def shared_weights(a: np.ndarray) -> list[np.ndarray]:
        x = tp.tensor(a.reshape(2, 3))
        return [tp.grad(lambda w: tp.sum(tp.tanh(tp.matmul(x, w))))(shared_w).numpy()]

    jobs = [elementwise, matmul, reductions, override_scope, with_no_grad, second_order, softmax, shared_weights]
    return jobs[index]


def test_eight_threads_get_the_results_of_a_serial_run(fast_switching: None) -> None:
    """8 threads x 500 gradient computations at once (elementwise, matmul, reductions, an override
    scope, no_grad, a second-order gradient, softmax, a weight shared by two threads): every result
    is bit for bit the one the same computation gives run serially."""
    rng = np.random.default_rng(9)
    inputs = [[rng.standard_normal(6) for _ in range(CALLS)] for _ in range(THREADS)]
    shared_w = tp.tensor(rng.standard_normal((3, 2)))
    jobs = [_job(i, shared_w) for i in range(THREADS)]
    serial = [[jobs[i](a) for a in inputs[i]] for i in range(THREADS)]

    concurrent: list[list[list[np.ndarray]]] = [[] for _ in range(THREADS)]
    start = threading.Barrier(THREADS, timeout=TIMEOUT)

    def worker(i: int) -> Callable[[], None]:
        def run() -> None:
            start.wait()
            for a in inputs[i]:
                concurrent[i].append(jobs[i](a))

        return run

    run_threads(*(worker(i) for i in range(THREADS)), barriers=[start])
    for i in range(THREADS):
        assert len(concurrent[i]) == CALLS
        for k in range(CALLS):
            for got, want in zip(concurrent[i][k], serial[i][k], strict=True):
                assert got.dtype == want.dtype, f"thread {i}, call {k}"
                assert np.array_equal(got, want), f"thread {i}, call {k}"
