"""What outside users handed the torch backend: NumPy views with negative strides, sparse, nested and negated tensors.

torch cannot import a negative stride through DLPack, and says so by throwing a C++ exception that ends the
process (SIGABRT) rather than raising; those cases run in a subprocess, whose exit status is checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import torch

import tensorplug as tp

NEGATIVE_STRIDES = {
    "reversed 1-d": ("tp.from_dlpack(np.arange(3.0)[::-1])", [2.0, 1.0, 0.0]),
    "reversed columns": ("tp.from_dlpack(np.array([[1.0, 2.0], [3.0, 4.0]])[:, ::-1])", [[2.0, 1.0], [4.0, 3.0]]),
    "every other, reversed": ("tp.from_dlpack(np.arange(6, dtype=np.int32)[::-2])", [5, 3, 1]),
    "copy of a reversed view": ("tp.tensor(np.arange(3.0)[::-1])", [2.0, 1.0, 0.0]),
}


def run_isolated(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a fresh interpreter on torch (numpy as np, tensorplug as tp), with no TENSORPLUG_ variable."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    prelude = "import numpy as np, tensorplug as tp\ntp.set_backend('torch')\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("case", list(NEGATIVE_STRIDES))
def test_numpy_views_with_negative_strides_are_copied_not_aborted_on(case: str) -> None:
    expression, expected = NEGATIVE_STRIDES[case]
    done = run_isolated(f"t = {expression}\nprint((t + 1).tolist(), t.tolist())")
    assert done.returncode == 0, f"the process ended with status {done.returncode}:\n{done.stderr[-2000:]}"
    plus_one = np.add(expected, 1).tolist()
    assert done.stdout.strip() == f"{plus_one} {expected}"


def test_a_producer_without_strides_exporting_a_negative_stride_is_copied() -> None:
    done = run_isolated(
        """
        class Producer:  # DLPack only: no strides attribute to look at
            def __init__(self):
                self.array = np.arange(4.0)[::-1]
            def __dlpack__(self, **kwargs):
                return self.array.__dlpack__(**kwargs)
            def __dlpack_device__(self):
                return self.array.__dlpack_device__()
        print(tp.from_dlpack(Producer()).tolist())
        """
    )
    assert done.returncode == 0, f"the process ended with status {done.returncode}:\n{done.stderr[-2000:]}"
    assert done.stdout.strip() == "[3.0, 2.0, 1.0, 0.0]"


def test_positive_strides_stay_zero_copy() -> None:
    base = np.arange(12.0).reshape(3, 4)
    view = base[:, ::2]  # strided, not negative: torch imports it as it is
    t = tp.from_dlpack(view)
    assert t.tolist() == view.tolist()
    assert t.raw.data_ptr() == view.__array_interface__["data"][0]


# -- layouts tensorplug does not hold: refused as the numpy backend refuses them -------------------------------------


def _sparse_coo() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's notes on sparse invariant checks
        return torch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (3,))


def _sparse_csr() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "sparse CSR support is in beta"
        return torch.eye(3).to_sparse_csr()


def _nested() -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "nested tensors are a prototype"
        return torch.nested.nested_tensor([torch.ones(2), torch.ones(3)])


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (_sparse_coo, "layout torch.sparse_coo is not strided"),
        (_sparse_csr, "layout torch.sparse_csr is not strided"),
        (_nested, "nested (ragged) tensor"),
    ],
    ids=["sparse_coo", "sparse_csr", "nested"],
)
def test_from_dlpack_refuses_sparse_and_nested_tensors(make: object, says: str) -> None:
    source = make()  # type: ignore[operator]
    with pytest.raises(tp.BackendError) as caught:
        tp.from_dlpack(source)
    message = str(caught.value)
    assert message.startswith("from_dlpack(): backend 'torch'")
    assert says in message
    assert "to_dense()" in message or "to_padded_tensor" in message


def test_a_lazily_negated_tensor_keeps_its_sign() -> None:
    negated = torch.tensor([1 + 2j, 3 - 4j]).conj().imag  # a view with torch's negative bit set
    assert negated.is_neg()
    assert tp.from_dlpack(negated).tolist() == [-2.0, 4.0]
    assert tp.tensor(negated).tolist() == [-2.0, 4.0]


def test_a_size_no_machine_holds_is_refused_at_once() -> None:
    """The call that kept the dask backend building a graph for minutes: torch's allocator refuses it at once."""
    with pytest.raises(tp.KernelError) as caught:
        tp.random_normal((10**7, 10**7))
    message = str(caught.value)
    assert "kernel 'RandomNormal' on backend 'torch'" in message
    assert "(10000000, 10000000)" in message
    assert "'float32'" in message
