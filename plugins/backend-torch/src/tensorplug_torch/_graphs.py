"""CUDA graphs for ``tp.function``: the replays of a program captured once as a ``torch.cuda.CUDAGraph``, then
launched as one graph per call.

``TorchBackend.compile`` asks :func:`compile_graphed` for every ``tp.function`` program. On a CUDA device, with
the switch on (``TENSORPLUG_TORCH_CUDA_GRAPHS``, the backend's ``cuda_graphs`` option), a program that a graph
can hold (:func:`unsuited` says which cannot, and why) gets a :class:`GraphedReplay` around the replay the core
generates from the backend's step lowerings (``tp.generate_replay``, the replay it would have had anyway).

A graph replays the kernels it recorded on the same memory, so the graph's inputs are static buffers and so are
its results. At its first call (the function's second: the first traced it) the replay copies its inputs into
buffers of its own, runs the program on a side stream to warm the libraries up (cuBLAS and the allocator, as
torch requires before a capture), captures it on that stream, and launches the graph. From then on each call
copies the arguments, the Variables' values and the host values into those buffers, launches the graph, and
returns clones of its results: a replay's outputs and the Variables' new values are fresh storage at every call,
as the replay contract says. A program the graph cannot hold, and one whose capture raises, keeps the plain
lowered replay (a capture that raises warns once); :func:`cuda_graph_status` says which it got, and why.
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import torch

import tensorplug as tp
from tensorplug import kernel_names as K

if TYPE_CHECKING:
    from tensorplug_torch._backend import TorchBackend

__all__ = [
    "ENV_GRAPHS",
    "CudaGraphs",
    "GraphStatus",
    "GraphedReplay",
    "compile_graphed",
    "cuda_graph_status",
    "graphs_switch",
    "reads_to_host",
    "unsuited",
]

ENV_GRAPHS = "TENSORPLUG_TORCH_CUDA_GRAPHS"
"""``1`` turns CUDA graphs on for the torch backend, ``0`` (the default) off; the backend's ``cuda_graphs`` option
(``tp.set_backend("torch", cuda_graphs=True)``) decides over it."""

WARM_UPS = 3
"""Runs of the program on the side stream before its capture (as ``torch.cuda.make_graphed_callables``)."""

_RANDOM = frozenset(K.RANDOM)
_ON = ("1", "true", "on", "yes")
_OFF = ("0", "false", "off", "no")

Kernel = TypeVar("Kernel", bound=Callable[..., Any])


# -- the switch ----------------------------------------------------------------------------------------------------


def graphs_switch(option: bool | None) -> bool:
    """Whether the torch backend captures CUDA graphs: ``option`` (the backend's ``cuda_graphs``) if given, else
    TENSORPLUG_TORCH_CUDA_GRAPHS, else off."""
    if option is not None:
        if not isinstance(option, bool):
            raise tp.BackendError(f"torch backend: cuda_graphs must be True, False or None, got {option!r}")
        return option
    value = os.environ.get(ENV_GRAPHS, "").strip().lower()
    if value in _ON:
        return True
    if not value or value in _OFF:
        return False
    raise tp.BackendError(
        f"torch backend: {ENV_GRAPHS}={os.environ[ENV_GRAPHS]!r} is neither on nor off; set it to 1 (capture "
        "tp.function replays as CUDA graphs) or 0 (launch each kernel in turn, the default)"
    )


# -- what a graph cannot hold -----------------------------------------------------------------------------------------


def _always(specs: Mapping[str, Any]) -> bool:
    return True


def reads_to_host(kernel: Kernel, when: Callable[[Mapping[str, Any]], bool] | None = None) -> Kernel:
    """Declare that ``kernel`` reads device values back to the host (a device sync: to check an index, say), or
    does so for the inputs that ``when(specs)`` is true of (``specs``: each input's ``tp.TensorSpec`` by name, a
    list for a list input). A CUDA graph cannot capture such a call: a ``tp.function`` program that makes one keeps
    its plain replay on CUDA. Returns ``kernel``, so that it decorates::

        @reads_to_host
        def my_kernel(inputs, attrs, backend): ...
    """
    kernel.reads_to_host = when if when is not None else _always  # type: ignore[attr-defined]
    return kernel


def _input_specs(program: tp.Program, step: tp.Step) -> dict[str, Any]:
    specs = program.specs
    return {name: [specs[r] for r in reg] if isinstance(reg, tuple) else specs[reg] for name, reg in step.inputs}


def unsuited(program: tp.Program, device: torch.device) -> str | None:
    """Why the replays of ``program`` cannot run as one CUDA graph on ``device``, or None when they can.

    A graph records each kernel's launch once and replays it on the same memory: the program must make kernel
    calls, every one of them on the device with no read back to the host (no sync: a kernel declared with
    :func:`reads_to_host`), and draw no random numbers (a graph would replay the draws of its capture's generator
    state). Its constants must be tensors on ``device``; its shapes and dtypes are the trace's, fixed.
    """
    steps = program.kernel_steps
    if not steps:
        return "it makes no kernel call"
    for n, step in enumerate(steps, 1):
        where = f"kernel call {n} of {len(steps)} ({step.kernel})"
        if step.kernel in _RANDOM:
            return f"{where} draws random numbers, which a graph would draw alike at every launch"
        reads = getattr(step.function, "reads_to_host", None)
        if callable(reads) and reads(_input_specs(program, step)):
            return f"{where} reads device values back to the host (a sync), which a graph cannot capture"
        for reg in (*step.input_registers, *step.outputs):
            spec = program.specs[reg]
            if spec.dtype is None or spec.shape is None:
                return f"{where} has an input or output whose dtype and shape the trace could not tell"
    for reg, raw in program.constants:
        if not isinstance(raw, torch.Tensor) or raw.device != device:
            place = f"a tensor on {raw.device}" if isinstance(raw, torch.Tensor) else f"a {type(raw).__name__}"
            return f"its constant r{reg} ({program.specs[reg]}) is {place}, not a tensor on {device}"
    return None


def _backend_reason(backend: TorchBackend) -> str | None:
    if not backend.is_cuda:
        return f"the torch backend runs on {backend.device}: CUDA graphs need a CUDA device"
    if not backend.cuda_graphs:
        return (
            f"CUDA graphs are switched off ({ENV_GRAPHS}=0, or the backend's cuda_graphs option: "
            'tp.set_backend("torch", cuda_graphs=False))'
        )
    return None


# -- what became of each program ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GraphStatus:
    """Whether the replays of a ``tp.function`` program run as one CUDA graph on the torch backend, and why not.

    ``state`` is ``"captured"`` (each replay launches the graph), ``"waiting"`` (captured at the next replay),
    ``"declined"`` (the program, the device or the switch rules it out: ``reason`` says which) or ``"failed"``
    (capturing raised: ``reason`` says what); the last two run the plain lowered replay.
    """

    state: str
    reason: str | None = None

    @property
    def captured(self) -> bool:
        return self.state == "captured"

    def __str__(self) -> str:
        return self.state if self.reason is None else f"{self.state}: {self.reason}"


_statuses: weakref.WeakKeyDictionary[tp.Program, GraphStatus] = weakref.WeakKeyDictionary()

_UNSEEN = GraphStatus(
    "declined",
    "the torch backend did not lower this program (another backend's, or tp.function(lower=False), or a lowering "
    "that failed)",
)


def cuda_graph_status(program: tp.Program) -> GraphStatus:
    """Whether the replays of ``program`` (``f.program(*args)`` of a ``tp.function`` ``f``) run as a CUDA graph.

    >>> import tensorplug as tp
    >>> from tensorplug_torch import cuda_graph_status
    >>> tp.set_backend("torch", device="cpu")
    >>> double = tp.function(lambda x: x * 2.0)
    >>> print(cuda_graph_status(double.program(tp.tensor([1.0]))))
    declined: the torch backend runs on cpu: CUDA graphs need a CUDA device
    """
    return _statuses.get(program, _UNSEEN)


# -- capturing and launching ----------------------------------------------------------------------------------------


class Graph(Protocol):
    def replay(self) -> None: ...


class Graphs(Protocol):
    """The calls of torch.cuda a :class:`GraphedReplay` makes (:class:`CudaGraphs`; tests put a stand-in here)."""

    device: torch.device

    def current_stream(self) -> Any: ...

    def wait(self, stream: Any, previous: Any) -> None: ...

    def warm_up(self, run: Callable[[], Any], times: int) -> None: ...

    def capture(self, run: Callable[[], Any]) -> tuple[Graph, Any]: ...


_ONE_CAPTURE = threading.Lock()  # torch allows one capture at a time in a process


class CudaGraphs:
    """Capturing and launching graphs on one CUDA device, on a side stream of its own, as torch requires."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self._side: torch.cuda.Stream | None = None

    def _side_stream(self) -> torch.cuda.Stream:
        if self._side is None:
            self._side = torch.cuda.Stream(self.device)  # type: ignore[no-untyped-call]
        return self._side

    def current_stream(self) -> Any:
        return torch.cuda.current_stream(self.device)

    def wait(self, stream: Any, previous: Any) -> None:
        stream.wait_stream(previous)

    def warm_up(self, run: Callable[[], Any], times: int) -> None:
        """``run()`` ``times`` times on the side stream, ordered after the work queued so far and before what
        follows."""
        with torch.cuda.device(self.device):
            current, side = torch.cuda.current_stream(self.device), self._side_stream()
            side.wait_stream(current)
            try:
                with torch.cuda.stream(side):
                    for _ in range(times):
                        run()
            finally:
                current.wait_stream(side)

    def capture(self, run: Callable[[], Any]) -> tuple[Graph, Any]:
        """A graph of what ``run()`` launches, captured on the side stream, and what it returned (static storage,
        which each launch of the graph overwrites). Other threads' CUDA calls go on meanwhile."""
        graph = torch.cuda.CUDAGraph()
        current = torch.cuda.current_stream(self.device)
        capturing = torch.cuda.graph(graph, stream=self._side_stream(), capture_error_mode="thread_local")
        try:
            with _ONE_CAPTURE, torch.cuda.device(self.device), capturing:
                result = run()
        except BaseException:
            torch.cuda.set_stream(current)  # a capture that fails leaves its stream the current one
            raise
        return graph, result


GRAPHS: Callable[[torch.device], Graphs] = CudaGraphs
"""What :func:`compile_graphed` captures with, per device."""


class GraphedReplay:
    """A ``tp.Replay`` that runs ``replay`` once plainly on a side stream, captures it as a graph, and from then on
    launches the graph on static copies of its inputs and returns clones of its results (see the module's text).

    A call made while another thread launches the graph runs ``replay`` itself (the static buffers are one per
    graph); a call on another stream than the last waits for that stream first.
    """

    def __init__(self, replay: tp.Replay, graphs: Graphs, program: tp.Program) -> None:
        self.replay = replay
        self.graphs = graphs
        self.name = program.name
        self._program = weakref.ref(program)
        self._lock = threading.Lock()
        self._graph: Graph | None = None
        self._statics: tuple[Any, ...] = ()
        self._outputs: tuple[Any, ...] = ()
        self._updates: tuple[Any, ...] = ()
        self._stream: Any = None
        self.status = GraphStatus("waiting")
        _statuses[program] = self.status

    def __call__(
        self, arguments: Sequence[Any], variables: Sequence[Any], host: Sequence[Any]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        if self._graph is not None:
            if not self._lock.acquire(blocking=False):
                return self.replay(arguments, variables, host)  # another thread is launching the graph
            try:
                return self._launch(arguments, variables, host)
            finally:
                self._lock.release()
        if self.status.state == "waiting":
            with self._lock:
                if self.status.state == "waiting":
                    self._capture(arguments, variables, host)
                if self._graph is not None:
                    return self._launch(arguments, variables, host)
        return self.replay(arguments, variables, host)

    def _launch(
        self, arguments: Sequence[Any], variables: Sequence[Any], host: Sequence[Any]
    ) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """(Under the lock) this call's inputs into the static buffers, the graph launched, its results cloned."""
        graphs = self.graphs
        stream = graphs.current_stream()
        if stream != self._stream:  # the last launch, and the clones of its results, may still run on its stream
            graphs.wait(stream, self._stream)
            self._stream = stream
        for static, raw in zip(self._statics, (*arguments, *variables, *host), strict=True):
            static.copy_(raw)
        assert self._graph is not None
        self._graph.replay()
        return tuple([raw.clone() for raw in self._outputs]), tuple([raw.clone() for raw in self._updates])

    def _capture(self, arguments: Sequence[Any], variables: Sequence[Any], host: Sequence[Any]) -> None:
        """(Under the lock) capture the graph, or record why not. Raises what the replay raises on this call's
        inputs while warming up: this call's own error, as the plain replay would raise it."""
        device = self.graphs.device
        inputs = (*arguments, *variables, *host)
        for kind, values in (("argument", arguments), ("variable", variables), ("host value", host)):
            for n, raw in enumerate(values):
                if not isinstance(raw, torch.Tensor) or raw.device != device:
                    place = f"on {raw.device}" if isinstance(raw, torch.Tensor) else f"a {type(raw).__name__}"
                    self._give_up("declined", f"{kind} {n} of its first replay is {place}, not a tensor on {device}")
                    return
        try:
            self.graphs.warm_up(lambda: self.replay(arguments, variables, host), WARM_UPS)
        except Exception as exc:
            self._give_up("failed", f"its replay raised while warming up: {type(exc).__name__}: {exc}")
            raise
        statics = tuple(raw.clone() for raw in inputs)  # in the layout of the first replay's inputs
        a, v = len(arguments), len(arguments) + len(variables)

        def run() -> Any:
            return self.replay(statics[:a], statics[a:v], statics[v:])

        try:
            graph, (outputs, updates) = self.graphs.capture(run)
        except Exception as exc:
            failure = f"capturing raised {type(exc).__name__}: {exc}"
            self._give_up("failed", failure)
            warnings.warn(
                f"tp.function {self.name!r}: the torch backend could not capture its replay as a CUDA graph "
                f"({failure}), so each call launches its kernels in turn; the results are the same. {ENV_GRAPHS}=0 "
                "turns capturing off",
                tp.FunctionWarning,
                stacklevel=5,
            )
            return
        self._graph, self._statics = graph, statics
        self._outputs, self._updates = tuple(outputs), tuple(updates)
        self._stream = self.graphs.current_stream()
        self._set(GraphStatus("captured"))

    def _give_up(self, state: str, reason: str) -> None:
        self._set(GraphStatus(state, reason))

    def _set(self, status: GraphStatus) -> None:
        self.status = status
        program = self._program()
        if program is not None:
            _statuses[program] = status


def compile_graphed(backend: TorchBackend, program: tp.Program) -> tp.Replay | None:
    """``TorchBackend.compile``: a :class:`GraphedReplay` of ``program``'s lowered replay, or None (the core then
    lowers it step by step, as it would without graphs) when the device, the switch or the program rules it out."""
    reason = _backend_reason(backend) or unsuited(program, backend.torch_device)
    if reason is not None:
        _statuses[program] = GraphStatus("declined", reason)
        return None
    lowered = tp.generate_replay(program, backend.lower_step, fuse=backend.fuse, label=f"{backend.name} lowering")
    return GraphedReplay(backend.wrap_replay(lowered), GRAPHS(backend.torch_device), program)
