"""The dask backend object: raw storage is a lazy, chunked ``dask.array.Array``.

Nothing here computes on its own. A kernel adds tasks to a graph; values are
computed when the user reads them (``.numpy()``, ``np.asarray``, ``.item()``,
printing), when data moves to an eager backend, and when ``persist`` is asked
for (``tp.persist``, an optimizer's step, a ``tp.function`` replay): then the
graph of the tensors persisted is computed once and its results kept, in this
process or on the workers of a ``dask.distributed`` client.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np

from tensorplug import Backend, BackendError, KernelError, TensorplugError

_NAMES = {np.dtype(name): name for name in ("float32", "float64", "int32", "int64", "bool")}


class DaskBackend(Backend):
    """Tensors as ``dask.array`` arrays: lazy, chunked, computed on one machine or a dask cluster.

    ``chunks`` is how ``tp.tensor`` (and data moved in from another backend)
    splits host arrays, as ``dask.array.from_array`` takes it: ``"auto"``
    (the default: chunks of dask's ``array.chunk-size``), an int (at most that
    many elements along every axis), a dict ``{axis: size}`` (``{0: 100_000}``:
    blocks of rows, other axes whole) or a tuple with one entry per axis (used
    only for arrays of that many dimensions; others take ``"auto"``).

    ``client`` is a ``dask.distributed.Client`` (or a scheduler address, to
    which one is connected): every computation and persist runs on its
    workers. None (the default) uses dask's default scheduler, which is the
    newest Client made in this process, else the local threaded scheduler.

    ``persist`` (True by default) lets optimizers and ``tp.function`` persist
    the variables they update at each step, so that step N's graph does not
    hold steps 0..N-1; False keeps everything lazy until read.
    """

    name = "dask"
    device = "cpu"
    lazy = True

    def __init__(self, chunks: Any = "auto", client: Any = None, persist: bool = True) -> None:
        self.chunks = chunks
        if isinstance(client, str):
            try:
                from distributed import Client
            except ImportError as exc:
                raise BackendError(
                    f"dask backend: client={client!r} needs dask.distributed; "
                    "pip install 'tensorplug-dask[distributed]'"
                ) from exc
            client = Client(client)
        if client is not None and not hasattr(client, "persist"):
            raise BackendError(
                f"dask backend: client must be a dask.distributed.Client or a scheduler address, not "
                f"{type(client).__name__}"
            )
        self.client = client
        self.persist_steps = bool(persist)

    # -- storage -------------------------------------------------------------------------------------------------

    def _chunks_for(self, shape: tuple[int, ...]) -> Any:
        chunks = self.chunks
        if not shape:
            return ()
        if isinstance(chunks, tuple) and len(chunks) != len(shape):
            return "auto"
        if isinstance(chunks, dict):
            return {axis: size for axis, size in chunks.items() if -len(shape) <= axis < len(shape)} or "auto"
        return chunks

    def from_host(self, array: np.ndarray) -> Any:
        chunks = self._chunks_for(array.shape)
        if self.client is not None and array.nbytes > _SCATTER_BYTES:
            return self._scatter(array, chunks)
        return da.from_array(array, chunks=chunks, asarray=True, fancy=False)

    def _scatter(self, array: np.ndarray, chunks: Any) -> Any:
        """A big host array sent to the client's workers block by block, not embedded in every graph."""
        normalized = da.core.normalize_chunks(chunks, array.shape, dtype=array.dtype)
        blocks = []
        offsets = [np.cumsum((0, *c)) for c in normalized]
        for index in np.ndindex(*[len(c) for c in normalized]):
            region = tuple(slice(o[i], o[i + 1]) for o, i in zip(offsets, index, strict=True))
            blocks.append((index, array[region]))
        futures = self.client.scatter([b for _, b in blocks])
        pieces: np.ndarray = np.empty([len(c) for c in normalized], dtype=object)
        for (index, block), future in zip(blocks, futures, strict=True):
            pieces[index] = da.from_delayed(future, shape=block.shape, dtype=block.dtype)
        return da.block(pieces.tolist())

    def to_host(self, raw: Any) -> np.ndarray:
        if isinstance(raw, da.Array):
            raw = self.compute(raw)
        return np.asarray(raw)

    def compute(self, raw: Any) -> Any:
        """The value of ``raw`` as a numpy array: its graph computed on the client, or dask's scheduler."""
        # Quiet, as the numpy backend: its kernels, mapped per chunk, are quiet wherever they run; dask's own chunked
        # Sum, AddN, BatchMatMul and Einsum call NumPy in dask's chunk functions, and dask's local scheduler carries
        # this errstate into its worker threads (its pool copies the caller's context variables).
        with _computing([raw]), np.errstate(all="ignore"):
            if self.client is not None:
                return self.client.compute(raw, sync=True)
            return raw.compute()

    def dtype_of(self, raw: Any) -> str:
        dtype = raw.dtype
        name = _NAMES.get(dtype)
        return name if name is not None else str(dtype.name)

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        shape = raw.shape
        if any(isinstance(n, float) and math.isnan(n) for n in shape):
            raise BackendError(
                f"dask backend: an array of unknown shape {shape} (a kernel made chunks of unknown size); "
                "call compute_chunk_sizes() on it, or report the kernel as a bug"
            )
        return tuple(int(n) for n in shape)

    def alias(self, raw: Any) -> Any:
        if isinstance(raw, da.Array):
            return da.Array(raw.dask, raw.name, raw.chunks, meta=raw._meta)  # the same graph, another object
        return self.from_host(np.array(raw))

    def move_from(self, raw: Any, source: Backend) -> Any:
        # source.to_host is a zero-copy view for numpy (and torch on the CPU); from_array keeps a reference to it,
        # so the values must be copied: storage of the source backend may be reused by its kernels (out=).
        return self.from_host(np.array(source.to_host(raw)))

    def dlpack_source(self, raw: Any) -> Any:
        return self.to_host(raw)  # DLPack exports host memory: the values are computed

    def memory(self) -> dict[str, Any]:
        if self.client is None:
            return {}
        info = self.client.scheduler_info()
        workers = info.get("workers", {})
        return {
            "workers": len(workers),
            "worker_memory_bytes": sum(int(w.get("metrics", {}).get("memory", 0)) for w in workers.values()),
        }

    def check_finite(self, raw: Any, message: str) -> Any:
        """``raw`` with a check added to its graph: computing it raises NonFiniteError where a chunk holds NaN/inf.

        ``message`` (debug mode's: kernel, inputs, attrs, pass) starts the error; the chunk's counts follow.
        """
        if raw.dtype.kind not in "fc":
            return raw
        return raw.map_blocks(_checked_block, message, dtype=raw.dtype, meta=raw._meta, token="finite-check")

    # -- computing ------------------------------------------------------------------------------------------------

    def persist(self, raws: Sequence[Any]) -> list[Any]:
        """Compute ``raws`` together (one graph, shared work computed once) and keep their results as chunks.

        With a client the work runs on its workers and this returns at once (the results are futures); with
        the local scheduler it returns when they are computed. Non-dask storage is returned as it is.
        """
        if not self.persist_steps:
            return list(raws)
        lazy = [i for i, r in enumerate(raws) if isinstance(r, da.Array) and not _is_persisted(r)]
        if not lazy:
            return list(raws)
        todo = [raws[i] for i in lazy]
        with _computing(todo), np.errstate(all="ignore"):  # quiet, as in compute
            done = self.client.persist(todo) if self.client is not None else dask.persist(*todo)
        out = list(raws)
        for i, r in zip(lazy, done, strict=True):
            out[i] = r
        return out

    def __repr__(self) -> str:
        where = f"client {self.client.scheduler.address}" if self.client is not None else "dask's default scheduler"
        return f"<DaskBackend 'dask': chunks={self.chunks!r}, {where}>"


# Host arrays above this many bytes are scattered to a client's workers rather than embedded in the graph.
_SCATTER_BYTES = 1 << 20


@contextlib.contextmanager
def _computing(raws: Sequence[Any]) -> Iterator[None]:
    """Errors raised by the tasks computing ``raws`` as KernelError: what was computed, and why it failed then."""
    try:
        yield
    except TensorplugError:
        raise  # debug mode's NonFiniteError, say: it names its kernel already
    except Exception as exc:
        what = ", ".join(f"{_NAMES.get(r.dtype, r.dtype)}[{', '.join(map(str, r.shape))}]" for r in raws)
        raise KernelError(
            f"dask backend: computing {what} failed in one of its tasks: {type(exc).__name__}: {exc}. On a lazy "
            "backend, kernels check values (index ranges, integer powers...) when the values are computed, which "
            "is now: the message above names the kernel whose check failed; the op that made it was called "
            "earlier, when the tensor was made. Fix the values reaching that op"
        ) from exc


def _is_persisted(raw: Any) -> bool:
    """Whether every task of ``raw``'s graph is a finished result (a persisted array) rather than work to do."""
    graph = raw.__dask_graph__()
    return len(graph) == raw.npartitions and all(not dask.core.istask(v) for v in graph.values())


def _checked_block(block: np.ndarray, message: str, block_info: Any = None) -> np.ndarray:
    finite = np.isfinite(block)
    if not finite.all():
        from tensorplug import NonFiniteError

        nan, inf = int(np.isnan(block).sum()), int(np.isinf(block).sum())
        where = ""
        if block_info and None in block_info:
            location = block_info[None].get("array-location")
            if location:
                first = tuple(int(i) + start for i, (start, _) in zip(np.argwhere(~finite)[0], location, strict=True))
                where = f", the first at index {first}"
        counts = " and ".join(p for p in (f"{nan} NaN" if nan else "", f"{inf} inf" if inf else "") if p)
        raise NonFiniteError(f"{message}\n  The chunk computed held {counts}{where}.")
    return block
