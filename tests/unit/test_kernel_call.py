"""Every caller of a kernel gives what the kernel call itself gives (``tensorplug._runtime._engine._call.call``).

``run_kernel``, the checked calls (the elementwise ops' ``binary`` and ``unary``, which call the kernel's direct
form themselves, and ``run_entry``), kernels of several outputs, the backward pass's links of higher-order
gradients and the gradient programs' results are each checked here against ``call`` made on the same inputs: the
same outputs (values, dtypes, backend, tape marks), the same records on the tape (kernel, inputs in their order,
attrs, outputs, gradient override), the same errors, and the same kernels seen by observers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._autodiff._backward import _GRADIENT_OF_SPEC, _Scope
from tensorplug._runtime._engine import call, engine, watching
from tensorplug._runtime._state import Record, Tape, state
from tensorplug._tracing import _gradient_programs as programs
from tensorplug.ops import _binary, _reduction, _unary
from tensorplug.ops._checked import Site

a, b = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)


def warm(site: Site, dtype: str, run: Callable[[], Any]) -> None:
    """Call ``run`` twice, so that ``site`` holds a current entry for ``dtype``: later calls take the fast path."""
    run()
    run()
    entry = site.entries.get(dtype)
    assert entry is not None, f"{site.op} made no entry for {dtype}"
    assert entry.table is engine.table


def primitive(name: str, inputs: dict[str, Any], attrs: dict[str, Any] | None = None, dtype: str | None = None) -> Any:
    """The kernel call itself, on the active backend's kernel ``name`` (what its dispatch table holds)."""
    backend = engine.active
    assert backend is not None
    fn = engine.table.get(name) or engine.resolve_kernel(name, backend)
    raw = {key: value._data for key, value in inputs.items()}
    return call(name, fn, raw, inputs, attrs or {}, backend, dtype, watching(state.tape, inputs))


def facts(t: tp.Tensor, tape: Tape | None) -> tuple[Any, ...]:
    """What a caller must give alike: the values, the dtype (and whether it is known without asking the storage),
    the backend, and whether the tensor carries the tape's mark."""
    token = None if tape is None else tape.token
    return (t.tolist(), t._dtype, t.dtype, t._backend, t._tape is token)


def record_facts(record: Record, outputs: Any) -> tuple[Any, ...]:
    """A record as the backward pass reads it; ``outputs`` are the tensors the call gave."""
    if type(record.outputs) is tuple:
        assert record.outputs[0] is outputs
    else:
        assert record.outputs == list(outputs)
        assert all(r is o for r, o in zip(record.outputs, outputs, strict=True))
    inputs = [(key, id(value)) for key, value in record.inputs.items()]
    return (record.kernel_name, inputs, record.attrs, type(record.outputs), len(record.outputs), record.grad)


def both(
    caller: Callable[[], Any], name: str, inputs: dict[str, Any], attrs: dict[str, Any] | None, dtype: str | None
) -> None:
    """Run ``caller`` and the kernel call on the same inputs, with no tape, then under a tape watching the first
    input, then under one watching none; check that they give the same."""
    got, expected = caller(), primitive(name, inputs, attrs, dtype)
    assert facts(got, None) == facts(expected, None)
    first = next(iter(inputs.values()))
    for watched in ([first], []):
        scope = _Scope(watched)
        with scope:
            got = caller()
            expected = primitive(name, inputs, attrs, dtype)
        tape = scope.tape
        assert facts(got, tape) == facts(expected, tape)
        records = tape.records
        assert len(records) == (2 if watched else 0)
        if watched:
            assert record_facts(records[0], got) == record_facts(records[1], expected)


# -- single outputs: each caller against the kernel call ------------------------------------------------------


def test_the_elementwise_binary_checked_call() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    warm(_binary._ADD, "float32", lambda: x + y)
    both(lambda: x + y, K.ADD, {"a": x, "b": y}, None, "float32")
    warm(_binary._LESS, "float32", lambda: x < y)
    both(lambda: x < y, K.LESS, {"a": x, "b": y}, None, "bool")


def test_the_elementwise_unary_checked_call() -> None:
    x = tp.tensor(a)
    warm(_unary._TANH, "float32", lambda: tp.tanh(x))
    both(lambda: tp.tanh(x), K.TANH, {"x": x}, None, "float32")


def test_run_entry() -> None:
    x = tp.tensor(a)
    warm(_reduction._SUM, "float32", lambda: tp.sum(x, 0))
    both(lambda: tp.sum(x, 0), K.SUM, {"x": x}, {"axis": (0,), "keep_dims": False}, "float32")


def test_run_kernel_records_its_inputs_in_their_declared_order() -> None:
    x, y = tp.tensor(a), tp.tensor(b)
    both(lambda: tp.run_kernel(K.SUB, {"b": y, "a": x}), K.SUB, {"b": y, "a": x}, None, None)
    scope = _Scope([x])
    with scope:
        tp.run_kernel(K.SUB, {"b": y, "a": x})
    assert list(scope.tape.records[0].inputs) == ["a", "b"]


def test_gradient_overrides_reach_every_caller() -> None:
    x, w = tp.tensor(a), tp.tensor(b)
    warm(_binary._MUL, "float32", lambda: x * w)

    def tripled(dy: tp.Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return dy * 3.0, dy * 3.0

    with tp.gradient_overrides({K.MULTIPLY: tripled}):
        both(lambda: x * w, K.MULTIPLY, {"a": x, "b": w}, None, "float32")
        both(lambda: tp.run_kernel(K.MULTIPLY, {"a": x, "b": w}), K.MULTIPLY, {"a": x, "b": w}, None, None)
        scope = _Scope([x])
        with scope:
            x * w
        assert scope.tape.records[0].grad is not None


def test_a_variable_read_by_a_recorded_call_is_not_assigned() -> None:
    v, x = tp.variable(a, name="v"), tp.tensor(b)
    warm(_binary._MUL, "float32", lambda: v * x)
    for run in (lambda: v * x, lambda: primitive(K.MULTIPLY, {"a": v, "b": x}, None, "float32")):
        with _Scope([x]):
            run()
            with pytest.raises(tp.GradientError, match="read the variable"):
                v.assign(tp.tensor(b))
    assert v.tolist() == a.tolist()


# -- errors and observers ----------------------------------------------------------------------------------


@pytest.mark.usefixtures("tensorplug_registries")
def test_every_caller_raises_the_kernel_calls_error() -> None:
    calls: list[int] = []

    def fails_late(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        if len(calls) > 2:
            raise ValueError("kaboom")
        return next(iter(inputs.values())) * 1

    def message(run: Callable[[], Any]) -> str:
        with pytest.raises(tp.KernelError) as info:
            run()
        assert isinstance(info.value.__cause__, ValueError)
        return str(info.value)

    x, y = tp.tensor(a), tp.tensor(b)
    for kernel, site, op, inputs, attrs in (
        (K.ADD, _binary._ADD, lambda: x + y, {"a": x, "b": y}, None),
        (K.NEG, _unary._NEG, lambda: -x, {"x": x}, None),
        (K.SUM, _reduction._SUM, lambda: tp.sum(x, 0), {"x": x}, {"axis": (0,), "keep_dims": False}),
    ):
        calls.clear()
        with pytest.warns(tp.PluginWarning, match="shadows"):
            tp.register_kernel(kernel, "numpy", fails_late, override=True)
        warm(site, "float32", op)
        expected = message(lambda: primitive(kernel, inputs, attrs))  # noqa: B023 - called at once
        assert message(op) == expected
        assert message(lambda: tp.run_kernel(kernel, inputs, attrs)) == expected  # noqa: B023
        assert expected.startswith(f"kernel {kernel!r} on backend 'numpy' failed for inputs ")


def test_observers_see_the_same_kernels() -> None:
    x, y = tp.tensor(a), tp.tensor(b)

    def by_ops() -> None:
        for _ in range(3):
            tp.tanh(x + y)
            tp.sum(x, 0)

    def by_the_kernel_call() -> None:
        for _ in range(3):
            primitive(K.TANH, {"x": primitive(K.ADD, {"a": x, "b": y})})
            primitive(K.SUM, {"x": x}, {"axis": (0,), "keep_dims": False})

    seen = [
        [(k.name, k.input_shapes, k.input_dtypes, k.output_shapes, k.output_dtypes) for k in tp.profile(run).kernels]
        for run in (by_ops, by_the_kernel_call)
    ]
    assert [kernel[0] for kernel in seen[0]] == [K.ADD, K.TANH, K.SUM] * 3
    assert seen[0] == seen[1]


# -- several outputs ---------------------------------------------------------------------------------------


@pytest.mark.usefixtures("tensorplug_registries")
def test_several_outputs_from_run_kernel_and_from_a_checked_call() -> None:
    def two(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        first, second = inputs["a"], inputs["b"]
        if first[0] > 100:
            return first + second, first * second
        return first + second

    with pytest.warns(tp.PluginWarning, match="shadows"):
        tp.register_kernel(K.ADD, "numpy", two, override=True)
    x, y, big = tp.tensor(a), tp.tensor(b), tp.tensor(a * 1000)
    warm(_binary._ADD, "float32", lambda: x + y)
    for caller in (lambda: big + y, lambda: tp.run_kernel(K.ADD, {"a": big, "b": y})):
        got, expected = caller(), primitive(K.ADD, {"a": big, "b": y})
        assert type(got) is list
        assert len(got) == 2
        assert [facts(t, None) for t in got] == [facts(t, None) for t in expected]
        scope = _Scope([big])
        with scope:
            got = caller()
            expected = primitive(K.ADD, {"a": big, "b": y})
        tape = scope.tape
        assert [facts(t, tape) for t in got] == [facts(t, tape) for t in expected]
        first, second = tape.records
        assert record_facts(first, got) == record_facts(second, expected)
        assert type(first.outputs) is list


# -- the backward pass: links of higher-order gradients, gradient programs ---------------------------------


def test_a_higher_order_gradient_is_linked_to_its_y() -> None:
    x = tp.tensor(a)
    scope = _Scope([x])
    with scope:
        g = tp.grad(lambda x: tp.sum(x * x * x))(x)
    link = scope.tape.records[-1]
    assert (link.kernel_name, list(link.inputs), link.attrs, link.grad) == (
        "GradientOf",
        ["y", "g"],
        {},
        _GRADIENT_OF_SPEC,
    )
    assert link.outputs == (g,)
    assert g._tape is scope.tape.token
    inner = link.inputs["g"]
    assert (g._data, g._backend, g._dtype) == (inner._data, inner._backend, inner._dtype)
    assert tp.grad(lambda x: tp.sum(tp.grad(lambda x: tp.sum(x * x * x))(x)))(x).tolist() == (6 * a).tolist()


def test_the_gradient_programs_give_what_the_walk_gives() -> None:
    x, w = tp.tensor(a), tp.tensor(b)
    f = tp.grads(lambda x, w: tp.sum(tp.tanh(x * w) * w))
    walked = f([x, w])
    f([x, w])  # traced
    assert any(isinstance(entry, programs.BackwardProgram) for entry in programs._programs.values())
    replayed = f([x, w])
    for g, r in zip(walked, replayed, strict=True):
        assert facts(r, None) == facts(g, None)
        assert r._dtype == "float32"
        assert r._tape is None
        assert np.array_equal(r.numpy(), g.numpy())
