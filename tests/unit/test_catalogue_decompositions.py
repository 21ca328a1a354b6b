"""The decompositions the kernel reference states for catalogue kernels that are composites of others: each one,
run in place of the kernel (on numpy with numpy's kernel unregistered, as on a backend that lacks it), passes every
conformance case of the kernel, gradients included."""

from __future__ import annotations

from typing import Any

import pytest

import tensorplug as tp
from tensorplug.kernel_reference import REFERENCE
from tensorplug.testing import cases_by_kernel, run_case

DECOMPOSED = [name for name, entry in REFERENCE.items() if entry.decomposition]
CASES = cases_by_kernel()


def test_the_core_declares_the_decomposition_each_entry_states() -> None:
    declared = {spec.kernel_name: spec for spec in tp.decompositions() if spec.source == "tensorplug"}
    assert sorted(declared) == sorted(DECOMPOSED)
    assert len(DECOMPOSED) >= 8
    for name in DECOMPOSED:
        assert REFERENCE[name].decomposition in (declared[name].fn.__doc__ or "")


@pytest.mark.parametrize("kernel", DECOMPOSED)
def test_the_decomposition_passes_the_kernel_s_conformance_cases_in_its_place(
    kernel: str, tensorplug_registries: Any
) -> None:
    tp.set_backend("numpy")
    with pytest.warns(tp.PluginWarning, match="removed the kernel"):  # numpy's, for the test (restored after it)
        tp.unregister_kernel(kernel, "numpy")
    assert kernel in tp.coverage().decomposed_for("numpy")
    cases = [c for c in CASES[kernel] if c.raises is None]
    assert cases
    for case in cases:
        run_case(case)
        run_case(case, traced=True)  # inside tp.function: one step, replayed as the decomposition
