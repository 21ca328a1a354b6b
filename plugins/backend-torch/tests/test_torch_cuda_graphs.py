"""CUDA graphs for tp.function replays on the torch backend: which programs a graph can hold and why not, the
switch, the capture at the first replay, the static buffers (inputs copied in, results cloned out), and the
fallback to the plain lowered replay.

Without a GPU, the capture and the launches run on CPU tensors with a stand-in for torch.cuda's graphs (its
"capture" runs the program once and keeps its results, its "launch" runs it again into them, as a graph
overwrites its static results); the tests marked ``cuda`` capture real graphs.
"""

from __future__ import annotations

import contextlib
import doctest
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import torch

import tensorplug as tp
from tensorplug_torch import _graphs, cuda_graph_status, reads_to_host
from tensorplug_torch._backend import TorchBackend
from tensorplug_torch._graphs import ENV_GRAPHS, GraphedReplay, graphs_switch, unsuited


class StandInGraph:
    def __init__(self, run: Callable[[], Any], result: Any, log: list[Any]) -> None:
        self.run, self.result, self.log = run, result, log

    def replay(self) -> None:
        self.log.append("launch")
        outputs, updates = self.run()
        for static, raw in zip((*self.result[0], *self.result[1]), (*outputs, *updates), strict=True):
            if static is not raw:
                static.copy_(raw)


class StandInGraphs:
    """torch.cuda's graphs as :class:`GraphedReplay` uses them, on the CPU, with a log of the calls."""

    def __init__(self, device: str = "cpu", capture_error: Exception | None = None) -> None:
        self.device = torch.device(device)
        self.capture_error = capture_error
        self.stream = "stream 1"
        self.log: list[Any] = []

    def current_stream(self) -> Any:
        return self.stream

    def wait(self, stream: Any, previous: Any) -> None:
        self.log.append(("wait", stream, previous))

    def warm_up(self, run: Callable[[], Any], times: int) -> None:
        self.log.append(("warm up", times))
        for _ in range(times):
            run()

    def capture(self, run: Callable[[], Any]) -> tuple[StandInGraph, Any]:
        self.log.append("capture")
        if self.capture_error is not None:
            raise self.capture_error
        result = run()
        return StandInGraph(run, result, self.log), result


@pytest.fixture
def graphs(monkeypatch: pytest.MonkeyPatch) -> StandInGraphs:
    """The active torch backend (on the CPU) taken for a CUDA one, capturing with a stand-in."""
    stand_in = StandInGraphs()
    monkeypatch.setattr(_graphs, "GRAPHS", lambda device: stand_in)
    backend = tp.backend()
    monkeypatch.setattr(backend, "is_cuda", True)
    monkeypatch.setattr(backend, "cuda_graphs", True)
    return stand_in


def _mlp(seed: int) -> tuple[tp.Tensor, tp.Tensor, list[tp.Variable], tp.train.Adam]:
    rng = np.random.default_rng(seed)
    x = tp.tensor(rng.normal(size=(8, 5)).astype(np.float32))
    labels = tp.tensor(np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)])
    params = [
        tp.variable(rng.normal(size=(5, 4)).astype(np.float32) * 0.5),
        tp.variable(np.zeros(4, np.float32)),
        tp.variable(rng.normal(size=(4, 3)).astype(np.float32) * 0.5),
        tp.variable(np.zeros(3, np.float32)),
    ]
    return x, labels, params, tp.train.Adam(0.05)


def _training(lower: bool) -> tuple[Callable[[tp.Tensor], tp.Tensor], list[tp.Variable]]:
    """An Adam step of a small MLP as a tp.function of its batch (Adam's step count comes in as host values)."""
    _, labels, params, adam = _mlp(0)
    w1, b1, w2, b2 = params

    def step(x: tp.Tensor) -> tp.Tensor:
        def loss() -> tp.Tensor:
            logits = tp.matmul(tp.relu(tp.matmul(x, w1) + b1), w2) + b2
            return tp.losses.softmax_cross_entropy(labels, logits)

        return adam.minimize(loss, params)

    return tp.function(step, lower=lower), params


# -- which programs a graph can hold -----------------------------------------------------------------------------------


def test_cpu_programs_are_never_captured() -> None:
    backend = tp.backend()
    assert not backend.is_cuda
    f = tp.function(lambda x: tp.tanh(x) * 2.0)
    x = tp.tensor([0.5, 1.0])
    for _ in range(3):
        f(x)
    program = f.program(x)
    assert backend.compile(program) is None
    status = cuda_graph_status(program)
    assert (status.state, status.captured) == ("declined", False)
    assert status.reason == "the torch backend runs on cpu: CUDA graphs need a CUDA device"
    unlowered = tp.function(lambda x: tp.tanh(x) * 2.0, lower=False)
    assert str(cuda_graph_status(unlowered.program(x))).startswith(
        "declined: the torch backend did not lower this program"
    )


def test_the_status_example_runs() -> None:
    previous = tp.backend().device
    try:
        assert doctest.testmod(_graphs).failed == 0
    finally:
        tp.set_backend("torch", device=previous)


def test_the_training_step_is_capturable() -> None:
    train, _ = _training(lower=True)
    x = tp.tensor(np.ones((8, 5), np.float32))
    assert unsuited(train.program(x), torch.device("cpu")) is None


def test_programs_a_graph_cannot_hold_are_declined_with_the_reason() -> None:
    cpu = torch.device("cpu")
    x = tp.tensor([1.0, 2.0, 3.0])

    def reason(fn: Callable[..., Any], *args: Any, device: torch.device = cpu) -> str | None:
        return unsuited(tp.function(fn).program(*args), device)

    assert reason(lambda x: x, x) == "it makes no kernel call"
    assert reason(lambda x: x + tp.random_normal((3,)), x) == (
        "kernel call 1 of 2 (RandomNormal) draws random numbers, which a graph would draw alike at every launch"
    )
    indices = tp.tensor([2, 0], dtype="int32")
    assert reason(lambda x, i: tp.gather(x, i) * 2.0, x, indices) == (
        "kernel call 1 of 2 (GatherV2) reads device values back to the host (a sync), which a graph cannot capture"
    )
    ints, base = tp.tensor([1, 2, 3], dtype="int32"), tp.tensor([2, 2, 2], dtype="int32")
    assert "kernel call 1 of 1 (Pow) reads device values back" in str(reason(lambda a: a**ints, base))
    assert reason(lambda a: a**x, tp.tensor([2.0, 2.0, 2.0])) is None  # a float power reads nothing back
    scale = tp.tensor([2.0, 3.0, 4.0])  # a constant of the trace, on the CPU
    assert reason(lambda x: x * scale, x, device=torch.device("cuda")) == (
        "its constant r1 (float32[3]) is a tensor on cpu, not a tensor on cuda"
    )


def test_a_kernel_declares_that_it_reads_back_to_the_host() -> None:
    def kernel(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return inputs["x"]

    assert reads_to_host(kernel) is kernel
    assert kernel.reads_to_host({"x": tp.TensorSpec("float32", (2,))}) is True  # type: ignore[attr-defined]
    only_ints = reads_to_host(kernel, when=lambda specs: specs["x"].dtype == "int32")
    assert only_ints.reads_to_host({"x": tp.TensorSpec("float32", (2,))}) is False  # type: ignore[attr-defined]


# -- the switch -------------------------------------------------------------------------------------------------------


def test_the_switch_is_the_option_then_the_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_GRAPHS, raising=False)
    assert graphs_switch(None) is False  # off by default
    for value, expected in (("0", False), ("off", False), ("1", True), (" TRUE ", True), ("", False)):
        monkeypatch.setenv(ENV_GRAPHS, value)
        assert graphs_switch(None) is expected
        assert graphs_switch(not expected) is (not expected)  # the backend's option decides over it
    monkeypatch.setenv(ENV_GRAPHS, "sometimes")
    with pytest.raises(tp.BackendError, match=r"TENSORPLUG_TORCH_CUDA_GRAPHS='sometimes' .* set it to 1 .* or 0"):
        TorchBackend(device="cpu")
    with pytest.raises(tp.BackendError, match="cuda_graphs must be True, False or None, got 'yes'"):
        graphs_switch("yes")  # type: ignore[arg-type]
    assert TorchBackend(device="cpu", cuda_graphs=False).cuda_graphs is False


def test_switched_off_the_program_keeps_its_lowered_replay(graphs: StandInGraphs) -> None:
    tp.backend().cuda_graphs = False
    f = tp.function(lambda x: tp.tanh(x) * 2.0)
    x = tp.tensor([0.5, 1.0])
    for _ in range(3):
        f(x)
    assert graphs.log == []
    status = cuda_graph_status(f.program(x))
    assert status.state == "declined"
    assert "CUDA graphs are switched off (TENSORPLUG_TORCH_CUDA_GRAPHS=0" in str(status.reason)


# -- capturing and launching (with the stand-in) ------------------------------------------------------------------


def test_a_training_step_is_captured_at_its_first_replay_and_gives_the_plain_replays_bits(
    graphs: StandInGraphs,
) -> None:
    graphed, graphed_params = _training(lower=True)
    plain, plain_params = _training(lower=False)
    batches = [tp.tensor(np.random.default_rng(i).normal(size=(8, 5)).astype(np.float32)) for i in range(5)]
    for n, x in enumerate(batches):
        expected = plain(x).numpy()
        assert graphed(x).numpy().tobytes() == expected.tobytes()
        # the first call traces (the graph waits for the first replay), the second captures
        assert cuda_graph_status(graphed.program(x)).state == ("waiting" if n == 0 else "captured")
        for got, want in zip(graphed_params, plain_params, strict=True):
            assert got.numpy().tobytes() == want.numpy().tobytes()
    assert graphs.log == [("warm up", _graphs.WARM_UPS), "capture", "launch", "launch", "launch", "launch"]
    assert graphed.trace_count == 1


def test_results_and_new_values_are_fresh_storage_at_every_call(graphs: StandInGraphs) -> None:
    counter = tp.variable(0.0)

    @tp.function
    def f(x: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
        counter.assign(counter + 1.0)
        return x * 2.0 + 1.0, x

    first = f(tp.tensor([1.0, 2.0]))
    second = f(tp.tensor([3.0, 4.0]))
    held = counter._value  # the storage the Variable holds after the second call
    third = f(tp.tensor([5.0, 6.0]))
    assert graphs.log[-2:] == ["launch", "launch"]
    assert [t.tolist() for t in (*first, *second, *third)] == [
        [3.0, 5.0], [1.0, 2.0], [7.0, 9.0], [3.0, 4.0], [11.0, 13.0], [5.0, 6.0],
    ]  # fmt: skip
    assert (held.item(), counter.numpy().item()) == (2.0, 3.0)  # a launch does not overwrite the storage held
    replay = tp.backend().compile(f.program(tp.tensor([0.0, 0.0])))
    assert isinstance(replay, GraphedReplay)


def test_variables_are_read_at_every_launch(graphs: StandInGraphs) -> None:
    counter = tp.variable(0.0)
    bump = tp.function(lambda: counter.assign(counter + 1.0))
    for _ in range(4):
        bump()
    counter.assign(10.0)  # between calls, outside the function
    bump()
    assert counter.numpy().item() == 11.0
    assert graphs.log.count("capture") == 1


def test_a_capture_that_raises_warns_once_and_keeps_the_lowered_replay(graphs: StandInGraphs) -> None:
    graphs.capture_error = RuntimeError("operation not permitted when stream is capturing")
    f = tp.function(lambda x: tp.exp(x) - 1.0)
    x = tp.tensor([0.0, 1.0])
    f(x)
    with pytest.warns(tp.FunctionWarning, match=r"tp.function '<lambda>': the torch backend could not capture"):
        assert f(x).tolist() == pytest.approx([0.0, 1.718281828])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(tp.tensor([0.0, 0.0])).tolist() == [0.0, 0.0]
    assert graphs.log == [("warm up", _graphs.WARM_UPS), "capture"]  # tried once, never launched
    status = cuda_graph_status(f.program(x))
    assert status.state == "failed"
    assert status.reason == "capturing raised RuntimeError: operation not permitted when stream is capturing"


def _graphed(graphs: StandInGraphs, fn: Callable[..., Any], *args: tp.Tensor) -> GraphedReplay:
    f = tp.function(fn)
    replay = tp.backend().compile(f.program(*args))
    assert isinstance(replay, GraphedReplay)
    return replay


def test_an_error_while_warming_up_is_the_calls_own(graphs: StandInGraphs) -> None:
    def broken(*args: Any) -> Any:
        raise ValueError("bad values")

    failing = GraphedReplay(broken, graphs, tp.function(lambda x: x * 2.0).program(tp.tensor([1.0])))
    with pytest.raises(ValueError, match="bad values"):
        failing([torch.ones(1)], [], [])
    assert str(failing.status) == "failed: its replay raised while warming up: ValueError: bad values"


def test_a_first_replay_off_the_device_is_declined(graphs: StandInGraphs) -> None:
    replay = _graphed(graphs, lambda x: x * 2.0, tp.tensor([1.0]))
    replay.graphs = StandInGraphs(device="meta")
    outputs, updates = replay([torch.tensor([3.0])], [], [])
    assert (outputs[0].tolist(), updates) == ([6.0], ())
    assert str(replay.status) == "declined: argument 0 of its first replay is on cpu, not a tensor on meta"


def test_a_call_on_another_stream_waits_for_the_last_launch(graphs: StandInGraphs) -> None:
    replay = _graphed(graphs, lambda x: x * 2.0, tp.tensor([1.0]))
    replay([torch.tensor([1.0])], [], [])
    graphs.stream = "stream 2"
    outputs, _ = replay([torch.tensor([2.0])], [], [])
    assert outputs[0].tolist() == [4.0]
    assert graphs.log[-2:] == [("wait", "stream 2", "stream 1"), "launch"]


def test_a_call_while_another_thread_launches_runs_the_plain_replay(graphs: StandInGraphs) -> None:
    replay = _graphed(graphs, lambda x: x * 2.0, tp.tensor([1.0]))
    replay([torch.tensor([1.0])], [], [])
    launches = graphs.log.count("launch")
    results: list[Any] = []
    with replay._lock:  # as while another thread launches the graph
        thread = threading.Thread(target=lambda: results.append(replay([torch.tensor([5.0])], [], [])))
        thread.start()
        thread.join()
    assert results[0][0][0].tolist() == [10.0]
    assert graphs.log.count("launch") == launches


# -- the calls of torch.cuda (with torch.cuda's stream and graph calls stood in for) -----------------------------


class FakeStream:
    def __init__(self, name: str, log: list[Any]) -> None:
        self.name, self.log = name, log

    def wait_stream(self, other: FakeStream) -> None:
        self.log.append(f"{self.name} waits for {other.name}")


class FakeCuda:
    """torch.cuda's streams and graph capture as CudaGraphs uses them; a capture that raises keeps its stream
    current, as torch.cuda.graph does when its capture_end raises."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.log: list[Any] = []
        self.default = self.current = FakeStream("default", self.log)
        for name in ("Stream", "current_stream", "stream", "device", "graph", "CUDAGraph", "set_stream"):
            monkeypatch.setattr(torch.cuda, name, getattr(self, name))

    def Stream(self, device: Any) -> FakeStream:  # noqa: N802
        return FakeStream("side", self.log)

    def current_stream(self, device: Any) -> FakeStream:
        return self.current

    def set_stream(self, stream: FakeStream) -> None:
        self.current = stream

    @contextlib.contextmanager
    def stream(self, stream: FakeStream) -> Iterator[None]:
        previous, self.current = self.current, stream
        yield
        self.current = previous

    def device(self, device: Any) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    def CUDAGraph(self) -> str:  # noqa: N802
        return "graph"

    @contextlib.contextmanager
    def graph(self, graph: str, stream: FakeStream, capture_error_mode: str) -> Iterator[None]:
        self.log.append(f"capture on {stream.name} ({capture_error_mode})")
        previous, self.current = self.current, stream
        try:
            yield
        except Exception:
            raise RuntimeError("operation failed due to a previous error during capture") from None
        self.current = previous


def test_warm_up_and_capture_run_on_a_side_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda = FakeCuda(monkeypatch)
    kit = _graphs.CudaGraphs(torch.device("cuda", 0))
    ran_on: list[str] = []

    def run() -> str:
        ran_on.append(cuda.current.name)
        return "results"

    kit.warm_up(run, 2)
    assert (ran_on, cuda.current.name) == (["side", "side"], "default")
    assert cuda.log == ["side waits for default", "default waits for side"]
    assert kit.capture(run) == ("graph", "results")
    assert (ran_on[-1], cuda.current.name) == ("side", "default")
    assert cuda.log[-1] == "capture on side (thread_local)"

    def failing() -> None:
        raise RuntimeError("operation not permitted when stream is capturing")

    with pytest.raises(RuntimeError, match="previous error during capture"):
        kit.capture(failing)
    assert cuda.current is cuda.default  # put back


# -- on a CUDA device ---------------------------------------------------------------------------------------------


@pytest.fixture
def cuda() -> Iterator[None]:
    previous = tp.backend().device
    tp.set_backend("torch", device="cuda", cuda_graphs=True)
    try:
        yield
    finally:
        tp.set_backend("torch", device=previous)


@pytest.mark.cuda
def test_cuda_training_step_runs_as_a_graph_with_the_plain_replays_bits(cuda: None) -> None:
    graphed, graphed_params = _training(lower=True)
    plain, plain_params = _training(lower=False)
    x = tp.tensor(np.random.default_rng(1).normal(size=(8, 5)).astype(np.float32))
    for _ in range(4):
        assert graphed(x).numpy().tobytes() == plain(x).numpy().tobytes()
    assert cuda_graph_status(graphed.program(x)).captured
    for got, want in zip(graphed_params, plain_params, strict=True):
        assert got.numpy().tobytes() == want.numpy().tobytes()


@pytest.mark.cuda
def test_cuda_capture_that_fails_keeps_the_lowered_replay(cuda: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_graphs, "unsuited", lambda program, device: None)  # let a syncing kernel through
    f = tp.function(lambda x, i: tp.gather(x, i) * 2.0)
    x, i = tp.tensor([1.0, 2.0, 3.0]), tp.tensor([2, 0], dtype="int32")
    f(x, i)
    with pytest.warns(tp.FunctionWarning, match="could not capture its replay as a CUDA graph"):
        assert f(x, i).tolist() == [6.0, 2.0]
    assert f(x, i).tolist() == [6.0, 2.0]
    assert cuda_graph_status(f.program(x, i)).state == "failed"


@pytest.mark.cuda
def test_cuda_switched_off_and_random_programs_launch_their_kernels(cuda: None) -> None:
    noisy = tp.function(lambda x: x + tp.random_normal((3,)))
    x = tp.tensor([1.0, 2.0, 3.0])
    assert noisy(x).tolist() != noisy(x).tolist()
    assert "draws random numbers" in str(cuda_graph_status(noisy.program(x)).reason)
    tp.set_backend("torch", device="cuda", cuda_graphs=False)
    double = tp.function(lambda x: x * 2.0)
    for _ in range(3):
        assert double(x).tolist() == [2.0, 4.0, 6.0]
    assert "switched off" in str(cuda_graph_status(double.program(x)).reason)
