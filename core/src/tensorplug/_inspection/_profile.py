"""``tp.profile`` and ``tp.time``: which kernels a call ran, how long they took, and the memory they made.

Both run ``fn`` under a kernel observer (:mod:`tensorplug._runtime._observe`) of the
calling thread: kernels run by other threads, even threads ``fn`` starts,
are not seen. Both synchronise the device around every kernel and around
the whole call, so that times on an asynchronous device (CUDA) are the
device's real times. Profiles nest: a profile inside a profile, or a
``tp.time`` inside either, and every enclosing one sees the inner kernels.

What the memory figures count (TensorFlow.js's ``tf.profile`` counts every
tensor of the engine; a Python backend has no such ledger, so tensorplug
counts the storage the kernels make):

- A kernel's *new tensors* are its outputs: each becomes a new Tensor.
- Its *new bytes* are ``Backend.nbytes`` of those outputs whose storage is
  new: an output that is one of the kernel's inputs (a kernel returning its
  input unchanged), or storage already counted earlier in the profile, adds
  nothing. Storage is told apart by identity, as ``tp.memory`` does, so a
  view (NumPy's reshape and broadcast_to, torch's view) counts in full.
- *Peak bytes* is the highest total, at any moment of the call, of the new
  storage still alive; storage is dead once released (tracked with weak
  references). Storage that takes no weak reference (NumPy's scalars, which
  NumPy's reductions to a scalar return) counts as alive until the end of
  the call. Tensors made from host data (``tp.tensor``) are not kernel
  outputs and are not counted.
- *Kept bytes* is what of it is still alive when ``fn`` returns (the result
  included): TensorFlow.js's ``newBytes``, which counts net of releases.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

from tensorplug._runtime._engine import engine
from tensorplug._runtime._observe import KernelCall, Observer, observing
from tensorplug._runtime._tensor import spec_text

if TYPE_CHECKING:
    from tensorplug._runtime._backend import Backend

__all__ = ["KernelProfile", "KernelSummary", "Profile", "Timing", "profile", "time"]

P = ParamSpec("P")
R = TypeVar("R")
Shape = tuple[int, ...]


@dataclass(frozen=True)
class KernelProfile:
    """One kernel call seen by ``tp.profile``: what ran where, on what, how long, and the bytes it made.

    ``phase`` is ``"forward"``, or ``"backward:<Kernel>"`` for a kernel run by
    the gradient of ``<Kernel>`` in backprop (adding up the gradients a tensor
    gets from several uses included); the seed of backprop, ones like the
    output, is made before it starts and is "forward". Input shapes and dtypes
    are keyed by input name; a list input gives a list. ``backend`` is the
    backend the call was made on; ``ran_on`` the one whose kernel ran: the
    same, or the fallback backend of a kernel ``backend`` lacks.
    """

    name: str
    backend: str
    device: str
    phase: str
    input_shapes: dict[str, Shape | list[Shape]]
    input_dtypes: dict[str, str | list[str]]
    output_shapes: list[Shape]
    output_dtypes: list[str]
    seconds: float
    new_bytes: int
    new_tensors: int
    ran_on: str = ""

    def __post_init__(self) -> None:
        if not self.ran_on:
            object.__setattr__(self, "ran_on", self.backend)

    @property
    def fallback(self) -> bool:
        """Whether the kernel ran on the fallback backend (``ran_on``), not on ``backend`` itself."""
        return self.ran_on != self.backend

    @property
    def ms(self) -> float:
        """The kernel's wall time in milliseconds."""
        return self.seconds * 1e3


@dataclass(frozen=True)
class KernelSummary:
    """The calls of one kernel name in a profile, added up (a row of ``Profile.summary()``)."""

    name: str
    calls: int
    seconds: float
    new_bytes: int

    @property
    def mean_seconds(self) -> float:
        """Wall time per call."""
        return self.seconds / self.calls


@dataclass(frozen=True, repr=False)
class Profile(Generic[R]):
    """What ``tp.profile(fn, ...)`` saw: every kernel call in order, totals, and ``fn``'s result.

    ``str(profile)`` is a table (see :meth:`table`); the module docstring of
    ``tensorplug._inspection._profile`` says exactly what the byte counts count. The wall
    time includes the profile's own bookkeeping (some microseconds a kernel on
    a CPU); ``tp.time`` adds less.
    """

    result: R
    kernels: list[KernelProfile]
    new_tensors: int  # kernel outputs made (each a new Tensor)
    new_bytes: int  # bytes of the new storage those outputs hold, added up
    peak_bytes: int  # highest bytes of that storage alive at once
    kept_bytes: int  # bytes of that storage still alive when fn returned
    kernel_seconds: float  # the kernels' wall times added up (device synchronised per kernel)
    wall_seconds: float  # the whole call (device synchronised at the start and the end)

    @property
    def kernel_names(self) -> list[str]:
        """The names of the kernels that ran, each once, in the order they first ran."""
        return list(dict.fromkeys(k.name for k in self.kernels))

    def summary(self) -> list[KernelSummary]:
        """One row per kernel name: calls, total time and new bytes; the most time first."""
        rows: dict[str, list[KernelProfile]] = {}
        for k in self.kernels:
            rows.setdefault(k.name, []).append(k)
        summaries = [
            KernelSummary(name, len(calls), sum(k.seconds for k in calls), sum(k.new_bytes for k in calls))
            for name, calls in rows.items()
        ]
        return sorted(summaries, key=lambda row: (-row.seconds, row.name))

    def table(self, max_width: int = 48) -> str:
        """The profile as text: a line per kernel call, the totals, then the time per kernel name.

        Columns wider than ``max_width`` characters (the inputs of a kernel
        taking a long list, say) are cut short with "...".
        """
        lines = _columns(
            ["kernel", "phase", "backend", "device", "inputs", "outputs", "new bytes", "time"],
            [
                [
                    k.name,
                    k.phase,
                    f"{k.backend} (on {k.ran_on})" if k.fallback else k.backend,
                    k.device,
                    _cut(_inputs_text(k), max_width),
                    _cut(_outputs_text(k), max_width),
                    format_bytes(k.new_bytes),
                    format_seconds(k.seconds),
                ]
                for k in self.kernels
            ],
            right=6,
        )
        lines.append("")
        lines.append(self._totals())
        if self.kernels:
            lines.append("")
            share = self.kernel_seconds or 1.0
            lines.extend(
                _columns(
                    ["kernel", "calls", "total", "mean", "share", "new bytes"],
                    [
                        [
                            row.name,
                            str(row.calls),
                            format_seconds(row.seconds),
                            format_seconds(row.mean_seconds),
                            f"{100 * row.seconds / share:.1f}%",
                            format_bytes(row.new_bytes),
                        ]
                        for row in self.summary()
                    ],
                    right=1,
                )
            )
        return "\n".join(lines)

    def _totals(self) -> str:
        calls = "1 kernel call" if len(self.kernels) == 1 else f"{len(self.kernels)} kernel calls"
        return (
            f"{calls}: {format_seconds(self.kernel_seconds)} in kernels, {format_seconds(self.wall_seconds)} wall; "
            f"{self.new_tensors} new tensors, {format_bytes(self.new_bytes)} new, "
            f"peak {format_bytes(self.peak_bytes)}, kept {format_bytes(self.kept_bytes)}"
        )

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<Profile of {self._totals()}>"


@dataclass(frozen=True, repr=False)
class Timing(Generic[R]):
    """What ``tp.time(fn, ...)`` measured: wall time, time in kernels, the kernel count, and ``fn``'s result."""

    result: R
    wall_seconds: float  # the whole call (device synchronised at the start and the end)
    kernel_seconds: float  # the kernels' wall times added up (device synchronised per kernel)
    kernels: int  # kernel calls

    @property
    def wall_ms(self) -> float:
        """``wall_seconds`` in milliseconds (TensorFlow.js's ``wallMs``)."""
        return self.wall_seconds * 1e3

    @property
    def kernel_ms(self) -> float:
        """``kernel_seconds`` in milliseconds (TensorFlow.js's ``kernelMs``)."""
        return self.kernel_seconds * 1e3

    def __repr__(self) -> str:
        calls = "1 kernel call" if self.kernels == 1 else f"{self.kernels} kernel calls"
        return f"<Timing: {format_seconds(self.wall_seconds)} wall, {format_seconds(self.kernel_seconds)} in {calls}>"


# -- the public functions ---------------------------------------------------------------------------------------------


def profile(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Profile[R]:
    """Run ``fn(*args, **kwargs)`` and return every kernel it ran, with times and memory, as ``tf.profile``.

    Only this thread's kernels are seen; the device is synchronised around
    each kernel. An exception from ``fn`` propagates, leaving nothing behind.

    >>> import tensorplug as tp
    >>> x = tp.tensor([1.0, 2.0, 3.0])
    >>> p = tp.profile(lambda x: tp.sum(x * x), x)
    >>> p.result.item(), p.kernel_names
    (14.0, ['Multiply', 'Sum'])
    >>> [(k.name, k.input_shapes, k.output_shapes, k.new_bytes, k.phase) for k in p.kernels]
    [('Multiply', {'a': (3,), 'b': (3,)}, [(3,)], 12, 'forward'), ('Sum', {'x': (3,)}, [()], 4, 'forward')]
    >>> print(p)  # doctest: +SKIP
    kernel    phase    backend  device  inputs                      outputs    new bytes     time
    Multiply  forward  numpy    cpu     a=float32[3], b=float32[3]  float32[3]      12 B  6.41 µs
    ...
    """
    recorder = _Recorder()
    try:
        result, wall = _timed_call(fn, args, kwargs, recorder)
    finally:
        kept = recorder.finish()
    return Profile(
        result=result,
        kernels=recorder.kernels,
        new_tensors=sum(k.new_tensors for k in recorder.kernels),
        new_bytes=sum(k.new_bytes for k in recorder.kernels),
        peak_bytes=recorder.peak_bytes,
        kept_bytes=kept,
        kernel_seconds=sum(k.seconds for k in recorder.kernels),
        wall_seconds=wall,
    )


def time(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> Timing[R]:
    """Run ``fn(*args, **kwargs)`` and return its wall time and its time in kernels, as ``tf.time``.

    The device is synchronised at the start and the end of the call and
    around each kernel, so CUDA times are real; only this thread's kernels
    count.

    >>> import tensorplug as tp
    >>> t = tp.time(lambda x: tp.sum(x * x), tp.tensor([1.0, 2.0]))
    >>> t.result.item(), t.kernels, 0 < t.kernel_seconds <= t.wall_seconds
    (5.0, 2, True)
    """
    clock = _Clock()
    result, wall = _timed_call(fn, args, kwargs, clock)
    return Timing(result=result, wall_seconds=wall, kernel_seconds=clock.seconds, kernels=clock.calls)


# -- observers --------------------------------------------------------------------------------------------------------


class _Clock:
    """The observer of ``tp.time``: adds up kernel times."""

    synchronize = True

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self.backends: dict[int, Backend] = {}  # every backend a kernel ran on: synchronised at the end

    def kernel_ran(self, call: KernelCall) -> None:
        self.seconds += call.seconds
        self.calls += 1
        self.backends[id(call.backend)] = call.backend


class _Recorder(_Clock):
    """The observer of ``tp.profile``: a KernelProfile per call, and the live bytes of the storage made.

    Storage is tracked through weak references whose callbacks take its
    bytes off the live total; the callbacks may run in any thread (whichever
    releases the storage), hence the lock. It is reentrant because a
    callback may also run in this thread while it holds the lock.
    """

    def __init__(self) -> None:
        super().__init__()
        self.kernels: list[KernelProfile] = []
        self.live: dict[int, tuple[weakref.ref[Any], int]] = {}  # id(storage) -> (weak reference, bytes)
        self.live_bytes = 0
        self.peak_bytes = 0
        self.lock = threading.RLock()

    def kernel_ran(self, call: KernelCall) -> None:
        super().kernel_ran(call)
        backend = call.backend
        inputs = [raw for value in call.inputs.values() for raw in (value if isinstance(value, list) else [value])]
        new_bytes = 0
        counted: list[Any] = []
        for raw in call.outputs:
            if _among(raw, inputs) or _among(raw, counted) or id(raw) in self.live:
                continue  # not new storage
            counted.append(raw)
            nbytes = backend.nbytes(raw)
            new_bytes += nbytes
            self._track(raw, nbytes)
        self.kernels.append(
            KernelProfile(
                name=call.kernel,
                backend=backend.name,
                device=backend.device,
                phase="forward" if call.gradient_of is None else f"backward:{call.gradient_of}",
                input_shapes={key: _shapes(backend, value) for key, value in call.inputs.items()},
                input_dtypes={key: _dtypes(backend, value) for key, value in call.inputs.items()},
                output_shapes=[backend.shape_of(raw) for raw in call.outputs],
                output_dtypes=[backend.dtype_of(raw) for raw in call.outputs],
                seconds=call.seconds,
                new_bytes=new_bytes,
                new_tensors=len(call.outputs),
                ran_on=backend.name if call.ran_on is None else call.ran_on.name,
            )
        )

    def _track(self, raw: Any, nbytes: int) -> None:
        key = id(raw)
        try:
            entry = (weakref.ref(raw, lambda _: self._released(key)), nbytes)
        except TypeError:  # no weak references: alive until the end, as far as the profile can tell
            entry = None
        with self.lock:
            if entry is not None:
                self.live[key] = entry
            self.live_bytes += nbytes
            self.peak_bytes = max(self.peak_bytes, self.live_bytes)

    def _released(self, key: int) -> None:
        with self.lock:
            entry = self.live.pop(key, None)
            if entry is not None:
                self.live_bytes -= entry[1]

    def finish(self) -> int:
        """Stop tracking (the weak references go, and their callbacks with them); return the bytes still alive."""
        with self.lock:
            self.live.clear()
            return self.live_bytes


def _timed_call(fn: Callable[..., R], args: Any, kwargs: Any, observer: _Clock) -> tuple[R, float]:
    """Call ``fn`` under ``observer``, with the device synchronised at the start and the end; (result, wall time)."""
    _synchronize([] if engine.active is None else [engine.active])
    watcher: Observer = observer
    with observing(watcher):
        start = perf_counter()
        result = fn(*args, **kwargs)
        _synchronize([*observer.backends.values(), *([] if engine.active is None else [engine.active])])
        wall = perf_counter() - start
    return result, wall


def _synchronize(backends: list[Backend]) -> None:
    done: set[int] = set()
    for backend in backends:
        if id(backend) not in done:
            done.add(id(backend))
            backend.synchronize()


# -- text -------------------------------------------------------------------------------------------------------------


def _among(raw: Any, raws: list[Any]) -> bool:
    """Whether ``raw`` is one of ``raws`` (by identity: ``in`` would compare arrays element by element)."""
    return any(raw is other for other in raws)


def _shapes(backend: Backend, value: Any) -> Shape | list[Shape]:
    if isinstance(value, list):
        return [backend.shape_of(raw) for raw in value]
    return backend.shape_of(value)


def _dtypes(backend: Backend, value: Any) -> str | list[str]:
    if isinstance(value, list):
        return [backend.dtype_of(raw) for raw in value]
    return backend.dtype_of(value)


def _inputs_text(k: KernelProfile) -> str:
    parts = []
    for key, shape in k.input_shapes.items():
        dtype = k.input_dtypes[key]
        if isinstance(shape, list):
            assert isinstance(dtype, list)
            parts.append(f"{key}=[{', '.join(spec_text(d, s) for s, d in zip(shape, dtype, strict=True))}]")
        else:
            assert isinstance(dtype, str)
            parts.append(f"{key}={spec_text(dtype, shape)}")
    return ", ".join(parts)


def _outputs_text(k: KernelProfile) -> str:
    return ", ".join(spec_text(d, s) for s, d in zip(k.output_shapes, k.output_dtypes, strict=True))


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 3, 0)] + "..."


def _columns(header: list[str], rows: list[list[str]], right: int) -> list[str]:
    """Aligned lines: the columns from index ``right`` on are right-aligned (numbers)."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.rjust(width) if i >= right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def format_seconds(seconds: float) -> str:
    """A duration with three significant digits in a fitting unit.

    >>> format_seconds(3.2e-7), format_seconds(0.00125), format_seconds(2.0)
    ('0.32 µs', '1.25 ms', '2 s')
    """
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def format_bytes(nbytes: int) -> str:
    """A byte count in B, KiB, MiB or GiB, three significant digits past bytes.

    >>> format_bytes(12), format_bytes(4096), format_bytes(3 * 2**20 // 2)
    ('12 B', '4 KiB', '1.5 MiB')
    """
    if nbytes < 1024:
        return f"{nbytes} B"
    value = float(nbytes)
    for unit in ("KiB", "MiB", "GiB"):
        value /= 1024
        if value < 1024 or unit == "GiB":
            break
    return f"{value:.3g} {unit}"
