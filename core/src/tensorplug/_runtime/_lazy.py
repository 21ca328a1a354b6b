"""Lazy backends (dask): ``tp.persist``, the step boundary at which their graphs are computed and kept.

On a lazy backend a kernel only adds work to a graph. Training would then
build step N's graph on top of steps 0..N-1 and compute all of them again at
every read. ``persist`` computes the graph of the tensors given, once, with
the work they share done once, and keeps the results as their storage, so
that later graphs start from there. Optimizers call it after each update
(for the variables, their slots and the loss together), and ``tp.function``
after each replay (for the outputs and the variables it assigned). On eager
backends it does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from tensorplug._runtime._state import state
from tensorplug._runtime._tensor import Tensor


def persist(*tensors: Tensor) -> None:
    """Compute the values of ``tensors`` now (on a lazy backend) and keep them as their storage.

    The tensors of one backend are computed together, in one graph. With a
    ``dask.distributed`` client this starts the work on the workers and
    returns at once. Eager backends (numpy, torch) are left alone, as is
    anything passed while ``tp.function`` traces (its replays persist).

    >>> import tensorplug as tp
    >>> w = tp.variable([1.0, 2.0])
    >>> tp.persist(w)  # numpy is eager: nothing to do
    >>> w.numpy()
    array([1., 2.], dtype=float32)
    """
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"tp.persist: expected Tensors, got {type(t).__name__}")
    persist_lazy(tensors)


def persist_lazy(tensors: Iterable[Tensor]) -> None:
    """``persist`` without the checks: the optimizers' call, nearly free when no tensor is on a lazy backend."""
    if state.tracer is not None:
        return
    groups: dict[int, list[Tensor]] = {}
    for t in tensors:
        if t._backend.lazy:
            groups.setdefault(id(t._backend), []).append(t)
    for group in groups.values():
        unique = list({id(t): t for t in group}.values())
        raws = unique[0]._backend.persist([t._data for t in unique])
        for t, raw in zip(unique, raws, strict=True):
            t._data = raw  # the same values, computed: storage is immutable, so every holder may share it
