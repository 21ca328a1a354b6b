"""Every ```python block of docs/authoring.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tensorplug as tp

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"


def test_authoring_guide_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 8, "docs/authoring.md lost its examples"
    namespace: dict[str, object] = {}
    try:
        for block in blocks:
            exec(compile(block, str(GUIDE), "exec"), namespace)
    finally:
        if "toy" in tp.list_backends():
            for spec in tp.kernels_for_backend("toy"):
                tp.unregister_kernel(spec.kernel_name, "toy")
            tp.remove_backend("toy")
        while tp.get_kernel("Add", "numpy") is not None and tp.get_kernel("Add", "numpy").source == "runtime":
            tp.unregister_kernel("Add", "numpy")
    out = capsys.readouterr().out
    assert out.startswith("tensorplug_mygpu._unary:sqrt True\ntoy\n")  # catalogue_kernels, then the toy backend
    assert "No kernel 'Exp' is registered for backend 'toy'" in out
    assert "toy toy [2.0, 4.0]" in out
    assert "['tensorplug-numpy', 'runtime']" in out
