"""Running a test's work in several threads at once, shared by the tests that call tensorplug from threads."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_in_threads(work: Callable[[int], None], count: int) -> None:
    """Call ``work(0)`` ... ``work(count - 1)``, each in a thread of its own, all released together once every
    thread has started; re-raise the first exception any of them raised."""
    start = threading.Barrier(count, timeout=30)
    errors: list[BaseException] = []

    def guarded(i: int) -> None:
        try:
            start.wait()
            work(i)
        except BaseException as exc:  # re-raised below, in the test's thread
            errors.append(exc)
            start.abort()

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
