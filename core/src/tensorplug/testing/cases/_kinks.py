"""Conformance cases built from the kernel reference's kinks.

Where a kernel's function has a kink or a jump (relu at 0, relu6 at 0 and 6, clip_by_value at its bounds, a tie
of maximum, the jumps of round...), its derivative does not exist and the numeric gradient checks stay away; the
gradient the core gives there is a convention, which each entry states (``KernelEntry.kinks``). Each kink becomes a
case ``<kernel>-kink-<i>``: the gradient of the sum of the op's output at that point, in float32 (a one-element
vector: a 0-d comparison may give a shared scalar object, which a traced program cannot replay).
"""

from __future__ import annotations

from typing import Any

import tensorplug as tp
from tensorplug.kernel_reference import REFERENCE, KernelEntry
from tensorplug.kernel_reference._entries import Kink
from tensorplug.testing._case import Case, f32


def _gradients(op: Any, kink: Kink, positions: list[int]) -> Any:
    """The function of the kernel's inputs that gives the gradients of the entry's grad inputs at a kink."""

    def gradients(*xs: Any) -> Any:
        grads = tp.grads(lambda *v: tp.sum(op(*v, *kink.args)))(list(xs))
        picked = tuple(grads[p] for p in positions)
        return picked[0] if len(picked) == 1 else picked

    return gradients


def kink_cases(entry: KernelEntry) -> list[Case]:
    """One case per kink of ``entry``: the gradient there is what the entry states."""
    if not entry.kinks:
        return []
    op = getattr(tp, entry.op_name)
    names = [i.name for i in entry.inputs]
    positions = [names.index(n) for n in entry.grad_inputs]
    cases = []
    for i, kink in enumerate(entry.kinks):
        grads = tuple(f32([g]) for g in kink.grads)
        cases.append(
            Case(
                entry.name,
                _gradients(op, kink, positions),
                tuple(f32([v]) for v in kink.at),
                grads[0] if len(grads) == 1 else grads,
                name=f"kink-{i}",
                dtypes=("bool",),
            )
        )
    return cases


CASES: list[Case] = [case for entry in REFERENCE.values() for case in kink_cases(entry)]
