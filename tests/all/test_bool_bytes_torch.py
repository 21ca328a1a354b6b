"""Bool data whose bytes are not 0/1 (np.frombuffer, a foreign or crafted safetensors file, a torch tensor built
from raw bytes) means the same on numpy and torch: True, and 1 once cast to int32."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import tensorplug as tp

SEVEN = b"\x07\x00\x01\xff"  # 7, 0, 1, 255
BACKENDS = ["numpy", "torch"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    tp.set_backend(request.param)
    return str(request.param)


def assert_clean_bools(t: tp.Tensor, backend: str) -> None:
    assert (t.backend, t.dtype) == (backend, "bool")
    assert tp.cast(t, "int32").tolist() == [1, 0, 1, 1]
    assert tp.sum(tp.cast(t, "int64")).item() == 3
    assert t.numpy().view(np.uint8).tolist() == [1, 0, 1, 1]


def test_tensor_of_a_numpy_array(backend: str) -> None:
    assert_clean_bools(tp.tensor(np.frombuffer(SEVEN, np.bool_)), backend)


def test_tensor_of_a_torch_tensor(backend: str) -> None:
    source = torch.frombuffer(bytearray(SEVEN), dtype=torch.bool)
    assert source.view(torch.uint8).tolist() == [7, 0, 1, 255]
    assert_clean_bools(tp.tensor(source), backend)


def test_load_and_restore_of_a_crafted_file(backend: str, tmp_path: Path) -> None:
    header = json.dumps({"m": {"dtype": "BOOL", "shape": [4], "data_offsets": [0, 4]}}).encode()
    path = tmp_path / "bools.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + SEVEN)
    assert_clean_bools(tp.load(path)["m"], backend)
    mask = tp.variable(np.zeros(4, np.bool_))
    tp.restore(path, {"m": mask})
    assert_clean_bools(mask, backend)


@pytest.mark.parametrize(
    "make", [lambda: np.frombuffer(SEVEN, np.bool_), lambda: torch.frombuffer(bytearray(SEVEN), dtype=torch.bool)]
)
def test_from_dlpack_refuses_them(backend: str, make: object) -> None:
    with pytest.raises(tp.DTypeError, match=r"2 bool byte\(s\) other than 0 and 1.*tp\.tensor\(x\)"):
        tp.from_dlpack(make())  # type: ignore[operator]
