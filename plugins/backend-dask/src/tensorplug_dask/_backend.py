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
from concurrent.futures import CancelledError
from typing import Any, NamedTuple

import dask
import dask.array as da
import numpy as np
from dask.utils import parse_bytes

from tensorplug import Backend, BackendError, KernelError, TensorplugError

_NAMES = {np.dtype(name): name for name in ("float32", "float64", "int32", "int64", "bool")}

# The default of ``max_chunks``: dask's docs name graphs of "millions of tasks" as where building and scheduling
# them takes considerable time (~1 ms of scheduler time per task: a quarter of an hour per million, for each op on
# such an array); the remedy they give is bigger chunks.
MAX_CHUNKS = 1_000_000

INSTALL_DISTRIBUTED = "pip install './plugins/backend-dask[distributed]'"
"""How to install this plugin with dask.distributed, from the root of a checkout (the distributions are not on a
package index yet)."""


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

    ``scatter`` (True by default): with a client, host arrays above 1 MiB are
    sent to the workers block by block (``client.scatter``) rather than put
    in each graph. A scattered block lives on one worker only, and is lost
    with it; False puts host data in the graph, from which the scheduler can
    compute a lost block again (``tp.persist`` such a tensor once, so that
    later graphs refer to its result rather than carry the data again).

    ``max_chunks`` (1,000,000 by default) is the most chunks a new array may
    have (one task each in every graph that uses it): an op asking for more
    (``tp.random_normal((10**7, 10**7))`` in chunks of 128 MiB needs about 3
    million) raises a ShapeError at once instead of spending minutes building
    a graph no scheduler gets through.
    """

    name = "dask"
    device = "cpu"
    lazy = True

    def __init__(
        self,
        chunks: Any = "auto",
        client: Any = None,
        persist: bool = True,
        max_chunks: int = MAX_CHUNKS,
        scatter: bool = True,
    ) -> None:
        if isinstance(max_chunks, bool) or not isinstance(max_chunks, int) or max_chunks < 1:
            raise BackendError(f"dask backend: max_chunks must be a positive int, got {max_chunks!r}")
        self.max_chunks = max_chunks
        self.chunks = chunks
        if isinstance(client, str):
            try:
                from distributed import Client
            except ImportError as exc:
                raise BackendError(
                    f"dask backend: client={client!r} needs dask.distributed; {INSTALL_DISTRIBUTED}"
                ) from exc
            client = Client(client)
        if client is not None and not hasattr(client, "persist"):
            raise BackendError(
                f"dask backend: client must be a dask.distributed.Client or a scheduler address, not "
                f"{type(client).__name__}"
            )
        self.client = client
        self.persist_steps = bool(persist)
        self.scatter = bool(scatter)

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

    def new_chunks(self, kernel: str, shape: tuple[int, ...], dtype: Any) -> tuple[tuple[int, ...], ...]:
        """The chunks of a new array of ``shape`` and ``dtype`` (the ``chunks`` option), normalized; a ShapeError
        naming ``kernel`` when there would be more than ``max_chunks`` of them (counted before any is made)."""
        spec = self._chunks_for(shape)
        dtype = np.dtype(dtype)
        least = _least_chunks(spec, shape, dtype)
        if least > self.max_chunks:
            raise self._too_many_chunks(kernel, shape, dtype, spec, least)
        chunks: tuple[tuple[int, ...], ...] = da.core.normalize_chunks(spec, shape, dtype=dtype)
        count = math.prod(len(c) for c in chunks)
        if count > self.max_chunks:
            raise self._too_many_chunks(kernel, shape, dtype, spec, count)
        return chunks

    def _too_many_chunks(self, kernel: str, shape: tuple[int, ...], dtype: np.dtype[Any], spec: Any, count: int) -> Any:
        from tensorplug import ShapeError

        nbytes = math.prod(shape) * dtype.itemsize
        if isinstance(spec, str):
            size = dask.config.get("array.chunk-size") if spec == "auto" else spec
            unit = f"chunks of at most {size} each (the chunks option {spec!r})"
        else:
            unit = f"chunks of the chunks option {spec!r}"
        return ShapeError(
            f"{kernel} on backend {self.name!r}: a {_NAMES.get(dtype, dtype.name)} tensor of shape {shape} holds "
            f"{nbytes:,} bytes ({_human(nbytes)}); in {unit} it needs at least {count:,} chunks, one task each, past "
            f"this backend's max_chunks ({self.max_chunks:,}): a graph that size takes minutes to build and more to "
            "schedule before any work starts. Use bigger chunks (tp.set_backend('dask', chunks='1GiB')), a smaller "
            "shape, or raise the limit (tp.set_backend('dask', max_chunks=...)) if your scheduler can take it"
        )

    def from_host(self, array: np.ndarray) -> Any:
        chunks = self.new_chunks("storing host data", array.shape, array.dtype)
        if self.client is not None and self.scatter and array.nbytes > _SCATTER_BYTES:
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

    def adopt(self, obj: Any) -> Any:
        """A ``dask.array`` array taken as it is (``tp.tensor(x)``): its graph and chunks, nothing computed.

        Its dtype becomes a tensorplug dtype as numpy data's does (float16 to float32, uint8 to int32, uint32 to
        int64, a non-native byte order to the native one), by a lazy ``astype``; other dtypes are refused, as are
        chunks of unknown size. Anything else is not adopted (NotImplemented): numpy reads it.
        """
        if not isinstance(obj, da.Array):
            return NotImplemented
        if any(math.isnan(n) for n in obj.shape):
            raise BackendError(
                f"tensor(): a dask array of unknown shape {obj.shape} (chunks of unknown size, from boolean "
                "indexing say) cannot be a tensor, whose shape must be known without computing; call "
                "x.compute_chunk_sizes() on it first (that computes), or reshape it to a known shape"
            )
        target = _adopted_dtype(obj.dtype)
        if target is None:
            from tensorplug import DTypeError

            raise DTypeError(
                f"tensor(): a dask array of dtype {obj.dtype} has no tensorplug dtype "
                f"({', '.join(_NAMES.values())}); convert it first, e.g. x.astype('float32')"
            )
        return obj if obj.dtype == target else obj.astype(target)

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

    def check_finite(self, raw: Any, message: str, *, kernel: str = "", gradient_of: str | None = None) -> Any:
        """``raw`` with a check added to its graph: computing it raises NonFiniteError where a chunk holds NaN/inf.

        ``message`` (debug mode's: kernel, inputs, attrs, pass) starts the error; the chunk's counts follow. The
        error's ``kernel``, ``backend`` and ``gradient_of`` are those of the call; ``nan`` and ``inf`` count the
        chunk that raised (the first chunk computed that held any).
        """
        if raw.dtype.kind not in "fc":
            return raw
        where = _Checked(message, kernel, self.name, gradient_of)
        return raw.map_blocks(_checked_block, where, dtype=raw.dtype, meta=raw._meta, token="finite-check")

    # -- computing ------------------------------------------------------------------------------------------------

    def persist(self, raws: Sequence[Any]) -> list[Any]:
        """Compute ``raws`` together (one graph, shared work computed once) and keep their results as chunks.

        With a client the work runs on its workers and this returns at once (the results are futures); with
        the local scheduler it returns when they are computed. Non-dask storage is returned as it is.
        """
        if not self.persist_steps:
            return list(raws)
        lazy = [i for i, r in enumerate(raws) if isinstance(r, da.Array) and not self._is_persisted(r)]
        if not lazy:
            return list(raws)
        todo = [raws[i] for i in lazy]
        with _computing(todo), np.errstate(all="ignore"):  # quiet, as in compute
            done = self.client.persist(todo) if self.client is not None else dask.persist(*todo)
        out = list(raws)
        for i, r in zip(lazy, done, strict=True):
            out[i] = r
        return out

    def _is_persisted(self, raw: Any) -> bool:
        """Whether ``raw``'s graph holds finished results only (a persisted array) rather than work to do; with a
        client, results on the workers (futures), not host data that every graph using it would carry again."""
        graph = raw.__dask_graph__()
        if len(graph) != raw.npartitions:
            return False
        if self.client is None:
            return all(not dask.core.istask(v) for v in graph.values())
        from distributed import Future

        return all(isinstance(v, Future) for v in graph.values())

    def __repr__(self) -> str:
        where = f"client {self.client.scheduler.address}" if self.client is not None else "dask's default scheduler"
        return f"<DaskBackend 'dask': chunks={self.chunks!r}, {where}>"


# Host arrays above this many bytes are scattered to a client's workers rather than embedded in the graph.
_SCATTER_BYTES = 1 << 20


def _least_chunks(spec: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> int:
    """A lower bound on the chunks ``spec`` gives ``shape``, found without normalizing (which builds a tuple per
    chunk along each axis: for 10**14 elements in chunks of 2, more than memory holds)."""
    if not shape:
        return 1
    if isinstance(spec, str):  # "auto", or a byte size ("256MiB"): no chunk holds more bytes than that
        limit = parse_bytes(dask.config.get("array.chunk-size") if spec == "auto" else spec)
        return max(1, -(-math.prod(shape) * dtype.itemsize // limit))
    if isinstance(spec, dict):
        per_axis = [spec.get(axis, spec.get(axis - len(shape), -1)) for axis in range(len(shape))]
    elif isinstance(spec, tuple | list):
        per_axis = list(spec)
    else:
        per_axis = [spec] * len(shape)
    count = 1
    for size, entry in zip(shape, per_axis, strict=True):
        if isinstance(entry, int) and not isinstance(entry, bool) and entry > 0:
            count *= max(1, -(-size // entry))
        elif isinstance(entry, tuple | list):
            count *= max(1, len(entry))
    return count


def _human(nbytes: int) -> str:
    """``364 TiB``: a byte count in the largest binary unit under it."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _computing(raws: Sequence[Any]) -> Iterator[None]:
    """Errors raised by the tasks computing ``raws`` as KernelError: what was computed, and why it failed then."""
    try:
        yield
    except TensorplugError:
        raise  # debug mode's NonFiniteError, say: it names its kernel already
    except CancelledError as exc:  # distributed's FutureCancelledError and FuturesCancelledError
        raise BackendError(_cancelled_message(_describe(raws), exc)) from exc
    except Exception as exc:
        what = _describe(raws)
        raise KernelError(
            f"dask backend: computing {what} failed in one of its tasks: {type(exc).__name__}: {exc}. On a lazy "
            "backend, kernels check values (index ranges, integer powers...) when the values are computed, which "
            "is now: the message above names the kernel whose check failed; the op that made it was called "
            "earlier, when the tensor was made. Fix the values reaching that op"
        ) from exc


def _adopted_dtype(dtype: np.dtype[Any]) -> np.dtype[Any] | None:
    """The tensorplug dtype a dask array of ``dtype`` becomes (as numpy data's does), None if it has none."""
    native = dtype.newbyteorder("=") if not dtype.isnative else dtype
    if native in _NAMES:
        return native
    if native.kind == "f" and native.itemsize < 4:
        return np.dtype(np.float32)
    if native.kind in "iu" and native.itemsize < 4:
        return np.dtype(np.int32)
    if native.kind == "u" and native.itemsize == 4:
        return np.dtype(np.int64)
    return None  # uint64 (values past int64), complex, strings, objects...


def _describe(raws: Sequence[Any]) -> str:
    """``float32[40000, 8], int32[]``: what is being computed, for messages."""
    return ", ".join(f"{_NAMES.get(r.dtype, r.dtype)}[{', '.join(map(str, r.shape))}]" for r in raws)


def _cancelled_message(what: str, exc: CancelledError) -> str:
    """What to say when the cluster cancelled a computation: most often, data that only a lost worker held."""
    cause = f"{type(exc).__name__}: {exc}"
    if "lost dependencies" in str(exc):
        return (
            f"dask backend: computing {what} failed: the cluster lost data it cannot compute again ({cause}). "
            f"Host data given to tp.tensor (or moved in from another backend) above {_SCATTER_BYTES >> 20} MiB is "
            "scattered to the workers, each block to one of them, and a worker that died or left took its blocks "
            "with it (the scheduler's log says 'lose scattered data'). Rerun: make those tensors again "
            "(tp.tensor(your_array)) and repeat what used them. To survive losing a worker, keep the data on the "
            "cluster in a form it can recompute: have the workers load it (a dask array from files, wrapped with "
            "tp.tensor, stays lazy), or tp.set_backend('dask', client=..., scatter=False), which puts host data in "
            "the graph itself, and tp.persist(x) once: the scheduler then recomputes a lost block from it"
        )
    return (
        f"dask backend: computing {what} failed: the cluster cancelled it ({cause}): a client.cancel or "
        "client.restart, a closed client, or data lost with a worker. Make the tensors it depends on again and rerun"
    )


class _Checked(NamedTuple):
    """What debug mode's check of one kernel output knows before any value exists (picklable, for the workers)."""

    message: str
    kernel: str
    backend: str
    gradient_of: str | None


def _checked_block(block: np.ndarray, checked: _Checked, block_info: Any = None) -> np.ndarray:
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
        raise NonFiniteError(
            f"{checked.message}\n  The chunk computed held {counts}{where}.",
            kernel=checked.kernel,
            backend=checked.backend,
            gradient_of=checked.gradient_of,
            nan=nan,
            inf=inf,
        )
    return block
