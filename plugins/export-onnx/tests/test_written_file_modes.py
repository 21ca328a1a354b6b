"""Files tensorplug writes get the permissions of any file the user writes: 0o666 less the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp


@pytest.fixture(params=[0o022, 0o002])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_an_exported_onnx_file_has_the_mode_of_a_checkpoint_and_of_open(tmp_path: Path, umask: int) -> None:
    model, checkpoint, plain = tmp_path / "model.onnx", tmp_path / "weights.tpck", tmp_path / "notes.txt"
    tp.export(lambda x: x * 2.0, tp.tensor(np.ones(3, np.float32)), format="onnx", path=model)
    tp.save(checkpoint, {"w": tp.tensor(np.ones(3, np.float32))})
    plain.write_text("written with open()")
    assert mode(plain) == 0o666 & ~umask
    assert mode(model) == mode(checkpoint) == mode(plain)


def test_exporting_over_a_file_keeps_its_mode(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"old")
    model.chmod(0o640)
    tp.export(lambda x: x + 1.0, tp.tensor(np.ones(2, np.float32)), format="onnx", path=model)
    assert mode(model) == 0o640
    assert model.read_bytes() != b"old"
