"""The leak check shared by tests/unit/test_leaks.py (numpy) and tests/all/test_threads_leaks_torch.py (torch)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import tensorplug as tp
from tensorplug._runtime._state import Record, Tape, state

SLACK = 16 * 1024
"""Bytes the traced heap may grow by over a loop of calls. What legitimately grows once after the
warm-up (a dict or free list resizing, a bounded cache adding an entry) stays in the hundreds of
bytes (32 bytes measured); a leak of anything per call, even one 16-byte object, grows it by >= 16 x
calls: 20 KB for the shortest loop of tests/unit/test_leaks.py (1 250 calls), 160 KB for its 10 000 plain
calls, 40 KB for the 2 500 pairs of tests/all/test_threads_leaks_torch.py."""


def alive(cls: type) -> int:
    """Objects of ``cls`` (or a subclass) alive now; by type, so that no object's ``__class__`` runs."""
    return sum(1 for obj in gc.get_objects() if issubclass(type(obj), cls))


def assert_no_leak(call: Callable[[], None], calls: int) -> None:
    """Run ``call`` ``calls`` times: the traced Python heap does not grow beyond SLACK, and no tensor,
    tape or tape record it made stays alive; this thread's autodiff state is as before."""
    for _ in range(50):  # warm-up: lazy imports, dispatch tables, the ops' bounded caches
        call()
    gc.collect()
    tensors = alive(tp.Tensor)
    tracemalloc.start()
    try:
        for _ in range(20):  # tracemalloc's own first allocations for these call sites
            call()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            call()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < SLACK, f"{calls} calls left {grown} bytes behind"
    assert alive(tp.Tensor) == tensors
    assert alive(Tape) == 0
    assert alive(Record) == 0
    assert state.tape is None
    assert state.overrides is None
    assert state.gradient_of is None
    assert state.outer_tapes == []
    assert state.outer_overrides == []
