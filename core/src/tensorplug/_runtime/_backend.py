"""The Backend base class: what a backend owns besides its kernels.

A backend owns the raw storage of its tensors: making it from host (numpy)
data, reading it back, naming its dtype, and moving data in from another
backend. Kernels are registered separately, per (kernel name, backend name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tensorplug._runtime._program import Constant, Program, Replay, StepLowering


class Backend:
    """Base class for backends; subclass it and override the storage methods.

    >>> class MyBackend(Backend):
    ...     name = "mine"
    ...     def from_host(self, array): return array.copy()
    ...     def to_host(self, raw): return np.asarray(raw)
    ...     def dtype_of(self, raw): return raw.dtype.name
    """

    name: str = "unnamed"
    device: str = "cpu"
    unsupported_dtypes: frozenset[str] = frozenset()
    """The tensorplug dtypes this backend cannot store (``frozenset({"float64"})`` for an accelerator or XLA
    with x64 off): making a tensor of one on it raises a DTypeError naming the backend, and the conformance
    suite skips what needs one and checks gradients in float32 instead."""
    flush_to_zero: bool = False
    """True when the backend's float kernels flush subnormal inputs and results to zero (many GPUs and XLA
    do); the conformance suite then accepts zero where a subnormal is expected."""
    lazy: bool = False
    """True when kernels return unevaluated storage (a task graph, as dask's arrays): the core then never asks for
    values on its own. Debug mode adds its NaN/inf check to the graph (:meth:`check_finite`) instead of reading
    each output back, and optimizers and ``tp.function`` call :meth:`persist` once per step."""
    prefers_decompositions: bool = False
    """True when ``tp.function`` should lower this backend's programs with every kernel that has a decomposition
    (``tp.register_decomposition``) replaced by its decomposition's steps, its own kernel of that name or not: a
    backend whose compiler fuses catalogue ops (:meth:`compile`, :meth:`lower_step`) then sees them instead of one
    opaque kernel. Replays may then differ from eager by the decomposition's rounding: declare it in
    :attr:`compile_ulps`. Eager calls and eager backprop's gradient programs still run the kernel."""
    compile_ulps: int = 0
    """How many units in the last place a replay made by :meth:`compile` may differ from eager, per float element
    (0: bit for bit). A fusing compiler declares what it needs (XLA contracts ``a * b + c`` to one rounding, 1
    ulp); the traced conformance run allows that much for compiled replays only, and reports it. Step lowerings
    (:meth:`lower_step`) and eager backprop's gradient programs must still give eager's bits."""

    def from_host(self, array: np.ndarray) -> Any:
        """Make raw storage holding a copy of ``array`` (already of a supported dtype)."""
        raise NotImplementedError

    def to_host(self, raw: Any) -> np.ndarray:
        """Return ``raw`` as a numpy array (a view where possible; callers never write to it)."""
        raise NotImplementedError

    def dtype_of(self, raw: Any) -> str:
        """The tensorplug dtype name of ``raw``."""
        raise NotImplementedError

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        """The shape of ``raw`` as a tuple of ints."""
        return tuple(raw.shape)

    def move_from(self, raw: Any, source: Backend) -> Any:
        """Make raw storage on this backend from ``raw`` living on ``source`` (a copy via host by default)."""
        return self.from_host(source.to_host(raw))

    def alias(self, raw: Any) -> Any:
        """A new storage object holding ``raw``'s values: a view where the library has one (no copy), else a copy.

        ``tp.function`` calls it while tracing, to tell apart tensors that share one storage object (a Variable
        and a snapshot of it); the default copies through the host, once per trace. Override it with a view.
        """
        return self.from_host(np.array(self.to_host(raw)))

    def adopt(self, obj: Any) -> Any:
        """Storage holding the values of ``obj``, an array of this backend's own library, or NotImplemented.

        ``tp.tensor(obj)`` asks first, for anything but Python scalars, lists,
        tuples, numpy data and Tensors: an array the backend can take as it is
        (a ``dask.array`` array on the dask backend: wrapped lazily, nothing
        computed) need not go through host memory. The storage must not
        change when ``obj`` is later written to (``tp.tensor`` copies): return
        ``obj`` itself only for immutable arrays. NotImplemented (the default)
        sends ``obj`` the usual way: DLPack, then ``numpy.asarray``.
        """
        return NotImplemented

    def from_dlpack(self, obj: Any) -> Any:
        """Raw storage from any object supporting DLPack (a copy through numpy by default; override for zero-copy)."""
        return self.from_host(np.from_dlpack(obj).copy())

    def dlpack_source(self, raw: Any) -> Any:
        """An object whose ``__dlpack__`` exports ``raw`` (``raw`` itself by default)."""
        return raw

    def nbytes(self, raw: Any) -> int:
        """The bytes of storage ``raw`` holds (for ``tp.memory``)."""
        return int(getattr(raw, "nbytes", 0))

    def memory(self) -> dict[str, Any]:
        """Backend-wide memory figures beyond live tensors (device allocator statistics, say)."""
        return {}

    def all_finite(self, raw: Any) -> bool:
        """Whether every element of ``raw`` is finite (no NaN, no inf); True for integer and bool storage.

        Debug mode calls it on every kernel output. The default reads ``raw``
        back through :meth:`to_host`; override it to check on the device.
        """
        array = self.to_host(raw)
        if array.dtype.kind not in "fc":
            return True
        return bool(np.isfinite(array).all())

    def check_finite(self, raw: Any, message: str, *, kernel: str = "", gradient_of: str | None = None) -> Any:
        """For a lazy backend: ``raw`` with a NaN/inf check added to its graph, which raises ``NonFiniteError``
        (``message``, then what the check found) when the values are computed. Debug mode calls it on kernel
        outputs instead of :meth:`all_finite` when :attr:`lazy` is True; the default returns ``raw`` unchecked.
        The error carries ``kernel`` (the kernel whose output it checks), ``gradient_of`` (None in the forward
        pass), this backend's name, and the NaN and inf counts the check found.
        """
        return raw

    def persist(self, raws: Sequence[Any]) -> list[Any]:
        """Start computing ``raws`` together and keep their results, so that later graphs build on the results
        rather than repeat the work (a lazy backend's step boundary). Eager backends return them unchanged.

        ``tp.persist`` calls it, as do optimizers after each update (the variables and the loss) and ``tp.function``
        after each replay (its outputs and the variables it assigned), once per backend.
        """
        return list(raws)

    def fused_update(self, name: str) -> Callable[[dict[str, Any], dict[str, Any], Any], list[Any]] | None:
        """The optimizers' whole update ``name`` as one function of this backend, or None (the default: the
        optimizers then run their ops). ``name`` is the name (a str: ``"ApplyAdam"``...) of one of
        ``tensorplug.train.FUSED_UPDATES``, whose ``help()`` gives its inputs, attrs and outputs; the function is
        called as a kernel is, ``fn(inputs, attrs, backend)``, and returns the list of new raw storages. It must
        make the same library calls, in the same order, as the ops it stands for (the same bits), and never write
        its inputs. See docs/authoring.md."""
        return None

    def lower_step(self, program: Program, index: int) -> StepLowering | Constant | None:
        """How this backend runs ``program.steps[index]`` (a :class:`~tensorplug.Step`) in a ``tp.function``
        replay: a :class:`~tensorplug.StepLowering` (a direct library call for it, and what the core's passes
        may do with it), a :class:`~tensorplug.Constant` (its value at every call), or None (the kernel call).

        ``tp.function`` asks once per step when it builds a trace's replay (unless :meth:`compile` made one);
        the core then folds pure steps of constants, writes dead buffers through ``into``, releases registers
        after their last use, and generates the replay. Compare ``step.function`` by identity with your own
        kernel: an override or a fallback may have run instead. The default lowers nothing. See
        docs/authoring.md for the contract.
        """
        return None

    def fuse(self, program: Program, chain: tuple[int, ...]) -> StepLowering | None:
        """How this backend runs a chain of steps of ``program`` as one call (a fused group), or None (the
        default) to run them one by one.

        ``chain`` lists step indices in order, each step already lowered as ``pure`` by :meth:`lower_step`; the
        output of each step but the last is read by the next step of the chain once and by nothing else (no other
        step, no output, no Variable's new value), so the group never has to make it. The answer is a
        :class:`~tensorplug.StepLowering` whose ``call(*inputs, *args, **kwargs)`` takes the registers
        ``program.chain_inputs(chain)`` names (every register the steps read that none of them makes, in the order
        they read them) and returns the last step's output; ``into(out, *inputs, ...)`` may write it into a dead
        buffer as for one step, and ``pure``, ``fresh`` and ``reads_only`` describe the group. Its results must
        be the steps' bit for bit (the same library calls in the same order, written into storage the group
        owns, give them). The core asks with two steps first, then with one more while the answer is a lowering,
        and keeps the longest chain answered. See docs/authoring.md."""
        return None

    def wrap_replay(self, replay: Replay) -> Replay:
        """The replay generated from this backend's step lowerings, wrapped as the backend needs (numpy runs it
        in its kernels' quiet floating-point context, entered once per call). The default returns it as it is."""
        return replay

    def compile(self, program: Program) -> Replay | None:
        """A whole-program replay of ``program`` made by the backend (a compiler's), or None to lower it step by
        step (:meth:`lower_step`). Called once per trace, first. The replay has the calling convention of
        :data:`~tensorplug.Replay`; a ``compile`` that raises leaves the plain replay, with one warning.
        ``tp.profile`` and debug mode still see the plain step-by-step replay. Its results must equal eager's:
        same dtypes, shapes and integer values, NaN where NaN, and floats within :attr:`compile_ulps` units in
        the last place (bit for bit by default)."""
        return None

    def synchronize(self) -> None:
        """Wait for queued work to finish (asynchronous devices); a no-op by default."""

    def dispose(self) -> None:
        """Release what the backend holds; called when it is removed."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} on {self.device}>"
