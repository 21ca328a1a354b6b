"""The lowering pipeline is data: docs/architecture.md shows its rows, and a pass added by one row runs for every
program that is lowered (tp.function's, eager backprop's gradient programs)."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug._runtime._program import Step
from tensorplug._tracing import _gradient_programs, _pipeline
from tensorplug._tracing._passes import Draft, Lowering

ARCHITECTURE = Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def test_the_architecture_page_shows_the_pipeline_as_it_is() -> None:
    text = ARCHITECTURE.read_text()
    shown = re.search(r"<!-- pipeline table -->\n(.*?)<!-- end pipeline table -->", text, re.S)
    assert shown is not None, "docs/architecture.md lost its pipeline table"
    assert shown.group(1) == _pipeline.pipeline_table()


def test_every_pass_says_what_it_does() -> None:
    for row in (*_pipeline.BUILD_PASSES, *_pipeline.PLAN_PASSES):
        assert row.what, f"pass {row.name!r} has no docstring"
    names = [row.name for row in (*_pipeline.BUILD_PASSES, *_pipeline.PLAN_PASSES)]
    assert len(names) == len(set(names))


class Counting:
    """A plan pass that counts the programs it saw, by their name, and the kernel steps of each."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    def __call__(self, lowering: Lowering) -> None:
        """Count the program's kernel steps."""
        program = lowering.program
        self.seen.append((program.name, [s.kernel for s in program.steps if isinstance(s, Step)]))


def test_a_plan_pass_added_by_one_row_runs_for_tp_function_and_for_gradient_programs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counting = Counting()
    monkeypatch.setattr(_pipeline, "PLAN_PASSES", (*_pipeline.PLAN_PASSES, _pipeline.Pass("count", counting)))
    _gradient_programs.clear()

    f = tp.function(lambda x: tp.tanh(x) * 2.0)
    assert f(tp.tensor([0.5, 1.0])).tolist() == pytest.approx(np.tanh([0.5, 1.0]) * 2.0)
    assert any("Tanh" in kernels for _, kernels in counting.seen), counting.seen

    before = len(counting.seen)
    x = tp.tensor([0.25, -1.5])
    gradient = tp.grads(lambda t: tp.sum(tp.exp(t) * t))
    for _ in range(3):  # the second sighting of a backward pass traces its program: lowered by the pipeline
        (g,) = gradient([x])
    np.testing.assert_allclose(g.numpy(), np.exp([0.25, -1.5]) * (1 + np.array([0.25, -1.5])), rtol=1e-6)
    gradient_programs = counting.seen[before:]
    assert gradient_programs, "eager backprop's gradient program did not go through the pipeline's plan passes"
    assert any("Exp" in kernels or "Multiply" in kernels for _, kernels in gradient_programs)


def test_a_build_pass_added_by_one_row_runs_on_every_trace(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []

    def count(draft: Draft) -> None:
        """Count the kept steps."""
        seen.append(len(draft.steps))

    monkeypatch.setattr(_pipeline, "BUILD_PASSES", (*_pipeline.BUILD_PASSES, _pipeline.Pass("count", count)))
    f = tp.function(lambda x: tp.exp(x) + 1.0)
    f(tp.tensor([1.0]))
    assert seen
    assert seen[-1] >= 2


class Answering:
    """The program's backend, answering ``lower_step`` with ``answer(program, index)`` and compiling nothing."""

    def __init__(self, backend: Any, answer: Any) -> None:
        self._backend = backend
        self._answer = answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def compile(self, program: Any) -> None:
        return None

    def lower_step(self, program: Any, index: int) -> Any:
        return self._answer(program, index)


def on(program: Any, answer: Any) -> Any:
    return dataclasses.replace(program, backend=Answering(program.backend, answer))


def test_a_constant_answer_is_shared_by_tp_function_but_never_by_a_gradient_program() -> None:
    program = tp.function(lambda x: x * 3.0).program(tp.tensor([1.0, 2.0]))
    folded = np.array([7.0, 7.0], np.float32)
    answering = on(program, lambda program, index: tp.Constant(folded))
    args = [np.array([1.0, 2.0], np.float32)]

    as_function = _pipeline.lower(answering, _pipeline.FUNCTION)
    assert as_function.replay is not None
    assert as_function.lowered
    first, _ = as_function.replay(args, [], [])
    assert first[0] is folded  # the constant itself, at every call

    as_gradient = _pipeline.lower(answering, _pipeline.GRADIENT)
    assert as_gradient.replay is not None
    assert not as_gradient.lowered
    one, _ = as_gradient.replay(args, [], [])
    two, _ = as_gradient.replay(args, [], [])
    assert one[0].tolist() == [3.0, 6.0]  # the kernel ran: the Constant answer was not taken
    assert one[0] is not two[0]


def test_a_lowering_that_raises_gives_the_plain_replay_to_tp_function_and_no_program_to_a_gradient() -> None:
    program = tp.function(lambda x: -x).program(tp.tensor([1.0]))

    def raising(program: Any, index: int) -> Any:
        raise RuntimeError("no lowering today")

    broken = on(program, raising)
    as_function = _pipeline.lower(broken, _pipeline.FUNCTION)
    assert as_function.failure == "RuntimeError: no lowering today"
    assert as_function.replay is not None
    assert not as_function.lowered
    outputs, _ = as_function.replay([np.array([2.0], np.float32)], [], [])
    assert outputs[0].tolist() == [-2.0]
    as_gradient = _pipeline.lower(broken, _pipeline.GRADIENT)
    assert as_gradient.replay is None
    assert as_gradient.failure == "RuntimeError: no lowering today"
