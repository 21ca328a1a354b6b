"""NumPy data with negative strides reaching torch: moves between backends, and torch.from_dlpack of a Tensor.

The numpy backend's kernels return views (``x[:, ::-1]``, ``tp.reverse``); torch cannot import a negative stride
through DLPack and ends the process (SIGABRT) instead of raising. Each case runs in a subprocess, whose exit
status is checked, and then checks its values.
"""

from __future__ import annotations

import pytest
import torch
from isolated import run_isolated

import tensorplug as tp

CASES = {
    # the tour (docs/tour.md): a reversed view made on numpy, used after switching to torch
    "tour, then set_backend": (
        """
        x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])[:, ::-1]
        tp.set_backend("torch")
        print((x + 1).tolist())
        """,
        "[[3.0, 2.0], [5.0, 4.0]]",
    ),
    "tp.reverse, then to_backend": (
        """
        x = tp.reverse(tp.tensor([[1.0, 2.0], [3.0, 4.0]]), 1).to_backend("torch")
        print(x.backend, x.tolist())
        """,
        "torch [[2.0, 1.0], [4.0, 3.0]]",
    ),
    "int view as a torch kernel input": (
        """
        x = tp.tensor([1, 2, 3, 4, 5], "int64")[::-2]
        tp.set_backend("torch")
        print(tp.sum(x).item())
        """,
        "9",
    ),
    "torch.from_dlpack of a Tensor": (
        """
        x = tp.tensor([[1.0, 2.0], [3.0, 4.0]])[:, ::-1]
        print(torch.from_dlpack(x).tolist())
        """,
        "[[2.0, 1.0], [4.0, 3.0]]",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_negative_strides_reach_torch_without_aborting(case: str) -> None:
    code, expected = CASES[case]
    done = run_isolated(code, "numpy", "numpy as np, torch, tensorplug as tp")
    assert done.returncode == 0, f"the process ended with status {done.returncode}:\n{done.stderr[-2000:]}"
    assert done.stdout.strip() == expected


def test_a_lazily_negated_torch_tensor_keeps_its_sign_on_numpy() -> None:
    negated = torch.tensor([1 + 2j, 3 - 4j]).conj().imag  # torch's DLPack export drops the negative bit
    assert negated.is_neg()
    assert tp.backend().name == "numpy"
    assert tp.from_dlpack(negated).tolist() == [-2.0, 4.0]
    assert tp.tensor(negated).tolist() == [-2.0, 4.0]
