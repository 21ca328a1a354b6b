"""The published lowering contract (tp.Program, tp.Step, tp.TensorSpec, tp.StepLowering, tp.Constant, the
replay calling convention), exercised the way an outside backend author would: from public names only."""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

rng = np.random.default_rng(0)


def interpret(program: tp.Program) -> tp.Replay:
    """A whole-program "compiler" written from the contract alone: it runs each step's kernel in order."""

    def replay(arguments: Any, variables: Any, host: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        regs = program.bind(arguments, variables, host)
        for step in program.steps:
            if not isinstance(step, tp.Step):
                continue  # an Assign: the new values are program.updates, returned below
            inputs = step.input_values(regs)
            out = step.function(inputs, step.attrs, program.backend)
            for reg, raw in zip(step.outputs, out if step.sequence else (out,), strict=True):
                regs[reg] = raw
        return tuple(regs[r] for r in program.outputs), tuple(regs[r] for _, r in program.updates)

    return replay


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[tp.Program]:
    """The numpy backend compiles whole programs with :func:`interpret`; the list holds what it compiled."""
    programs: list[tp.Program] = []

    def compile_(self: Any, program: tp.Program) -> tp.Replay:
        programs.append(program)
        return interpret(program)

    monkeypatch.setattr(type(tp.backend()), "compile", compile_)
    return programs


def test_a_compiler_written_from_the_contract_trains_as_eager(compiled: list[tp.Program]) -> None:
    """Variables in, new values out, host values (Adam's step count and hyper-parameters) in order."""
    sizes = [(8, 16), (16,), (16, 4), (4,)]
    init = [rng.standard_normal(s).astype(np.float32) * 0.3 for s in sizes]
    x, y = tp.tensor(rng.standard_normal((5, 8)).astype(np.float32)), tp.tensor(rng.standard_normal((5, 4)))
    y = tp.cast(y, "float32")

    def loss(params: list[tp.Variable]) -> tp.Tensor:
        w1, b1, w2, b2 = params
        return tp.mean(tp.square(tp.matmul(tp.relu(tp.matmul(x, w1) + b1), w2) + b2 - y))

    eager_params, traced_params = [tp.variable(w) for w in init], [tp.variable(w) for w in init]
    eager_opt, traced_opt = tp.train.Adam(0.01), tp.train.Adam(0.01)
    step = tp.function(lambda: traced_opt.minimize(lambda: loss(traced_params), traced_params))
    for _ in range(4):
        expected = eager_opt.minimize(lambda: loss(eager_params), eager_params)
        assert step().numpy().tobytes() == expected.numpy().tobytes()
        for a, b in zip(traced_params, eager_params, strict=True):
            assert a.numpy().tobytes() == b.numpy().tobytes()
    (program,) = compiled
    assert program.host_registers
    assert len(program.updates) == 4 + 8
    assert step.trace_count == 1


def test_specs_are_structured() -> None:
    program = tp.function(lambda x: tp.sum(x, axis=0)).program(tp.tensor(np.zeros((2, 3), np.float32)))
    (argument,) = program.arguments
    assert program.specs[argument] == tp.TensorSpec("float32", (2, 3))
    assert program.specs[argument].size == 6
    assert str(program.specs[program.outputs[0]]) == "float32[3]"


def test_a_replay_that_returns_the_wrong_updates_changes_no_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    v = tp.variable(np.array([1.0, 2.0], np.float32))

    def compile_(self: Any, program: tp.Program) -> tp.Replay:
        run = interpret(program)
        return lambda a, variables, h: (run(a, variables, h)[0], ())  # forgets the update

    monkeypatch.setattr(type(tp.backend()), "compile", compile_)
    f = tp.function(lambda: v.assign(v * 2.0))
    f()  # the trace runs eagerly: [2, 4]
    with pytest.raises(tp.KernelError, match=r"returned 0 variable updates for the program's 1"):
        f()
    assert v.numpy().tolist() == [2.0, 4.0]


def test_unseeded_random_steps_are_never_folded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a lowering that calls every step pure gets fresh draws at each call; a seeded draw is the same."""
    monkeypatch.setattr(type(tp.backend()), "lower_step", lambda self, program, index: tp.StepLowering(pure=True))
    fresh = tp.function(lambda: tp.random_normal((4,)))
    seeded = tp.function(lambda: tp.random_normal((4,), seed=3))
    program = fresh.program()
    (step,) = program.kernel_steps
    assert step.random
    assert not any(step.random for step in seeded.program().kernel_steps)  # a seeded draw is host data
    draws = [fresh().numpy().tolist() for _ in range(3)]
    assert draws[0] != draws[1] != draws[2]
    assert seeded().numpy().tolist() == seeded().numpy().tolist() == tp.random_normal((4,), seed=3).numpy().tolist()


def test_pure_steps_of_constants_run_once_when_lowering(
    monkeypatch: pytest.MonkeyPatch, tensorplug_registries: None
) -> None:
    calls = []

    def counted_exp(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return np.exp(inputs["x"])

    tp.register_kernel("CountedExp", tp.get_backend(), counted_exp)
    monkeypatch.setattr(
        type(tp.backend()),
        "lower_step",
        lambda self, program, i: tp.StepLowering(pure=True) if program.steps[i].kernel == "CountedExp" else None,
    )
    c = tp.tensor([0.0, 1.0])
    f = tp.function(lambda x: x + tp.run_kernel("CountedExp", {"x": c}))
    f(tp.tensor([1.0, 1.0]))
    assert len(calls) == 2  # the trace's eager call, then the fold
    for _ in range(3):
        assert f(tp.tensor([1.0, 1.0])).numpy().tolist() == [2.0, 1.0 + float(np.exp(np.float32(1.0)))]
    assert len(calls) == 2


def test_into_gets_only_dead_storage_the_replay_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never an argument, a returned value, a Variable's storage, or a buffer read again later."""
    written: list[int] = []

    def into(out: np.ndarray, *operands: np.ndarray) -> np.ndarray:
        written.append(id(out))
        return np.multiply(*operands, out=out)

    def lower_step(self: Any, program: tp.Program, i: int) -> Any:
        step = program.steps[i]
        if step.kernel == "Multiply":
            return tp.StepLowering(np.multiply, pure=True, fresh=True, reads_only=True, into=into)
        return None

    monkeypatch.setattr(type(tp.backend()), "lower_step", lower_step)
    v = tp.variable(np.ones(3, np.float32))

    def f(x: tp.Tensor) -> Any:
        a = x * 2.0  # fresh, dies at b: b may write into it
        b = a * a
        c = b * 3.0  # b dies here: c may write into it; c is assigned, so no later step writes into c
        v.assign(c)
        d = c * 0.5
        e = d * 1.5  # d dies here, is fresh: e writes into it; e is returned
        return e, x * 1.0  # x is an argument: never written

    x = tp.tensor([1.0, 2.0, 3.0])
    traced = tp.function(f)
    traced(x)
    got = traced(x)
    v_got = v.numpy().copy()
    expected = f(x)
    assert [t.numpy().tolist() for t in got] == [t.numpy().tolist() for t in expected]
    assert v_got.tolist() == v.numpy().tolist() == [12.0, 48.0, 108.0]
    assert x.numpy().tolist() == [1.0, 2.0, 3.0]
    assert len(written) == 3  # b into a, c into that buffer again, e into d: nothing else qualifies
    assert written[0] == written[1] != written[2]


def test_a_backend_with_the_old_lower_method_is_told_and_runs_the_plain_replay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(tp.backend()), "lower", lambda self, program: None, raising=False)
    f = tp.function(lambda x: x * 2.0)
    with pytest.warns(
        tp.FunctionWarning,
        match=r"defines lower\(program\), which the backend contract no longer has \(removed in tensorplug 0\.1\.0\), "
        r"so the core never calls it: rename it compile\(program\).*tp.function runs the plain replay meanwhile",
    ):
        f(tp.tensor([1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(tp.tensor([3.0])).numpy().tolist() == [6.0]


def test_a_lower_step_answer_of_the_wrong_type_is_a_lowering_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(tp.backend()), "lower_step", lambda self, program, index: "np.add(r1, r2)")
    f = tp.function(lambda x: x + x)
    with pytest.warns(
        tp.FunctionWarning, match=r"failed to lower .*returned a str for step 0 \(Add\), not a tp.StepLowering"
    ):
        assert f(tp.tensor([1.0])).numpy().tolist() == [2.0]
    assert f(tp.tensor([2.0])).numpy().tolist() == [4.0]


def test_a_pure_step_only_folded_steps_read_does_not_run(
    monkeypatch: pytest.MonkeyPatch, tensorplug_registries: None
) -> None:
    """The loss a gradient's seed is shaped after: once the seed is a constant, nothing needs the loss."""
    calls = []

    def counted_neg(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return -inputs["x"]

    tp.register_kernel("CountedNeg", tp.get_backend(), counted_neg)

    def lower_step(self: Any, program: tp.Program, i: int) -> Any:
        step = program.steps[i]
        if step.kernel == "CountedNeg":
            return tp.StepLowering(pure=True)
        if step.kernel == "OnesLike":
            spec = program.specs[step.outputs[0]]
            return tp.Constant(np.ones(spec.shape, spec.dtype))
        return None

    monkeypatch.setattr(type(tp.backend()), "lower_step", lower_step)
    f = tp.function(lambda x: tp.ones_like(tp.run_kernel("CountedNeg", {"x": x})) * x)
    f(tp.tensor([2.0, 3.0]))
    assert len(calls) == 1  # the trace
    assert f(tp.tensor([4.0, 5.0])).numpy().tolist() == [4.0, 5.0]
    assert len(calls) == 1
    monkeypatch.setattr(
        type(tp.backend()),
        "lower_step",
        lambda self, program, i: lower_step(self, program, i) if program.steps[i].kernel == "OnesLike" else None,
    )
    g = tp.function(lambda x: tp.ones_like(tp.run_kernel("CountedNeg", {"x": x})) * x)
    g(tp.tensor([2.0, 3.0]))
    g(tp.tensor([2.0, 3.0]))
    assert len(calls) == 3  # not said to be pure: it runs at every call


def test_a_multiplication_by_ones_is_its_input_and_no_buffer_it_shares_is_written() -> None:
    """x * ones (a gradient's seed times the first gradient) runs no kernel; the buffer it shares with x is
    written into only once neither is read again."""
    n = 1 << 15  # large enough for the numpy lowering's buffer reuse
    ones = tp.ones((n,))
    rng_values = rng.standard_normal(n).astype(np.float32)

    def f(x: tp.Tensor) -> Any:
        y = x * 2.0  # fresh: the replay owns it
        z = y * ones  # y itself; y is read again below, so z's buffer is still y's
        w = z + 1.0  # z dies here: writing w into z's buffer would change y
        return w, y * 3.0, tp.grads(lambda a: tp.sum(tp.tanh(a)))([x])[0]

    traced = tp.function(f)
    x = tp.tensor(rng_values)
    traced(x)
    for _ in range(2):
        got = traced(x)
        assert [g.numpy().tobytes() for g in got] == [e.numpy().tobytes() for e in f(x)]
    import inspect
    import linecache

    (entry,) = traced._cache.values()
    source = "".join(linecache.getlines(inspect.unwrap(entry.replay).__code__.co_filename))
    assert len(re.findall(r"^    r\d+ = r\d+$", source, re.M)) == 2  # y * ones, and the seed times the gradient
