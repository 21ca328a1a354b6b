"""The torch backend object: raw storage is torch.Tensor on one device (CUDA when present, else CPU)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.utils.dlpack import from_dlpack as torch_from_dlpack

from tensorplug import Backend, BackendError

if TYPE_CHECKING:
    from tensorplug import Constant, Program, Replay, StepLowering
from tensorplug_torch._probe import ENV_DEVICE
from tensorplug_torch._threads import warn_if_oversubscribed

DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "float64": torch.float64,
    "int32": torch.int32,
    "int64": torch.int64,
    "bool": torch.bool,
}
NAMES: dict[torch.dtype, str] = {dtype: name for name, dtype in DTYPES.items()}


def pick_device(device: str | None) -> torch.device:
    """``device`` if given, else TENSORPLUG_TORCH_DEVICE, else CUDA when available, else the CPU."""
    spec = device or os.environ.get(ENV_DEVICE, "").strip() or ("cuda" if torch.cuda.is_available() else "cpu")
    try:
        chosen = torch.device(spec)
    except RuntimeError as exc:
        raise BackendError(
            f"torch backend: {spec!r} is not a torch device ({exc}); use e.g. 'cpu' or 'cuda:0'"
        ) from exc
    if chosen.type == "cuda":
        if not torch.cuda.is_available():
            raise BackendError(
                f"torch backend: device {spec!r} asked for, but this torch ({torch.__version__}) sees no CUDA device; "
                f"use {ENV_DEVICE}=cpu or install a CUDA build of torch"
            )
        if chosen.index is None:
            chosen = torch.device("cuda", torch.cuda.current_device())
    return chosen


class TorchBackend(Backend):
    """Tensors as torch.Tensor on one device. Kernels never record torch autograd graphs.

    ``cuda_graphs``: on a CUDA device, capture the replays of ``tp.function`` programs as CUDA graphs (None: as
    TENSORPLUG_TORCH_CUDA_GRAPHS says, off by default); the attribute of that name may be changed later, for the
    traces made after.
    """

    name = "torch"

    def __init__(self, device: str | None = None, cuda_graphs: bool | None = None) -> None:
        from tensorplug_torch._graphs import graphs_switch

        self.torch_device = pick_device(device)
        self.device = str(self.torch_device)
        self.is_cuda = self.torch_device.type == "cuda"
        self.cuda_graphs = graphs_switch(cuda_graphs)
        if not self.is_cuda:
            warn_if_oversubscribed()  # torch's CPU threads against the cores free for them

    def from_host(self, array: np.ndarray) -> Any:
        if not array.flags.c_contiguous:  # (np.ascontiguousarray would also turn a 0-d array into 1-d)
            array = np.ascontiguousarray(array)
        raw = torch.from_numpy(array)  # the core hands over a fresh array: no copy on the CPU
        return raw.to(self.torch_device) if self.is_cuda else raw

    def to_host(self, raw: Any) -> np.ndarray:
        return raw.detach().cpu().numpy()  # type: ignore[no-any-return]  # a view on the CPU, a copy from a GPU

    def fused_update(self, name: str) -> Any:
        """The optimizers' fused update ``name`` (``ApplyAdam``...: see ``tensorplug.train``), or None."""
        from tensorplug_torch._train import FUSED_UPDATES

        return FUSED_UPDATES.get(name)

    def dtype_of(self, raw: Any) -> str:
        name = NAMES.get(raw.dtype)
        return name if name is not None else str(raw.dtype).removeprefix("torch.")  # the core refuses it by name

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        return tuple(raw.shape)

    def alias(self, raw: Any) -> Any:
        return raw.detach()  # a new tensor object over the same storage

    def from_dlpack(self, obj: Any) -> Any:
        """Zero-copy on this backend's device (a dense torch tensor is taken as it is); a copy from another device,
        and of a layout torch cannot import (a NumPy view with negative strides, say)."""
        raw = _dense(obj).detach() if isinstance(obj, torch.Tensor) else torch_from_dlpack(importable(obj))
        return raw if raw.device == self.torch_device else raw.to(self.torch_device)

    def move_from(self, raw: Any, source: Backend) -> Any:
        try:
            moved = torch_from_dlpack(importable(source.dlpack_source(raw)))  # zero-copy where the devices allow
        except (TypeError, RuntimeError, BufferError, AttributeError):
            moved = torch.from_numpy(np.array(source.to_host(raw)))
        return moved if moved.device == self.torch_device else moved.to(self.torch_device)

    def nbytes(self, raw: Any) -> int:
        return int(raw.element_size() * raw.nelement())

    def memory(self) -> dict[str, Any]:
        if not self.is_cuda:
            return {}
        return {
            "device_allocated_bytes": int(torch.cuda.memory_allocated(self.torch_device)),
            "device_reserved_bytes": int(torch.cuda.memory_reserved(self.torch_device)),
        }

    def all_finite(self, raw: Any) -> bool:
        if not (raw.dtype.is_floating_point or raw.dtype.is_complex):
            return True  # integers and bools hold no NaN or inf
        return bool(torch.isfinite(raw).all())  # one reduction on the device, one sync to read its result

    def synchronize(self) -> None:
        if self.is_cuda:
            torch.cuda.synchronize(self.torch_device)

    def dispose(self) -> None:
        if self.is_cuda:
            torch.cuda.empty_cache()

    def lower_step(self, program: Program, index: int) -> StepLowering | Constant | None:
        from tensorplug_torch._lower import lower_step  # imported at the first trace, not with the backend

        return lower_step(program, index)

    def compile(self, program: Program) -> Replay | None:
        """On CUDA, the program's lowered replay captured as a CUDA graph at its first call, where the program
        allows (see ``tensorplug_torch.cuda_graph_status``); None otherwise: the core lowers it step by step."""
        from tensorplug_torch._graphs import compile_graphed

        return compile_graphed(self, program)


def importable(obj: Any) -> Any:
    """``obj``, or a copy of it in a layout torch's DLPack import takes: strides that are not negative.

    torch cannot import a negative stride (a NumPy view such as ``a[::-1]``): its C++ check throws past Python
    and aborts the process instead of raising. So such a producer is copied first (a NumPy copy in C order),
    and only then handed to ``torch.from_dlpack``. Producers that report no strides (any DLPack producer on the
    CPU) are looked at through a NumPy view, which reads their layout without copying.
    """
    if isinstance(obj, torch.Tensor):
        return obj  # torch tensors have no negative strides
    strides = getattr(obj, "strides", None)
    if isinstance(strides, tuple) and (isinstance(obj, np.ndarray) or callable(getattr(obj, "copy", None))):
        return obj.copy() if any(s < 0 for s in strides) else obj  # numpy-style arrays (cupy too): C-order copies
    try:
        on_host = int(obj.__dlpack_device__()[0]) == _DL_CPU
    except Exception:
        return obj  # not a DLPack producer: torch's own error names it
    if not on_host:
        return obj
    try:
        view = np.from_dlpack(obj)
    except Exception:  # a dtype numpy lacks (bfloat16, say): torch reads it itself
        return obj
    return np.ascontiguousarray(view) if any(s < 0 for s in view.strides) else obj


_DL_CPU = 1  # DLPack's kDLCPU device type


def _dense(t: torch.Tensor) -> torch.Tensor:
    """``t`` if it is a dense tensor tensorplug can hold; its negative bit resolved (a copy); refused otherwise."""
    if t.is_nested:
        raise BufferError(
            "a nested (ragged) tensor has no single shape; tensorplug holds dense tensors: pad it first "
            "(torch.nested.to_padded_tensor(t, 0.0)) or pass its components one by one"
        )
    if t.layout != torch.strided:
        raise BufferError(
            f"layout {t.layout} is not strided: tensorplug (as DLPack) holds dense tensors; convert it first with "
            "t.to_dense()"
        )
    if t.is_neg():
        return t.resolve_neg()  # a lazy negation (x.conj().imag, say): the values, materialized
    return t
