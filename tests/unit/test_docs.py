"""Every ```python block of docs/authoring.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"


def test_authoring_guide_python_blocks_run(capsys: pytest.CaptureFixture[str], tensorplug_registries: None) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 8, "docs/authoring.md lost its examples"
    namespace: dict[str, object] = {}
    for block in blocks:  # its kernels go with ``tensorplug_registries``, its "toy" backend with conftest's fixture
        exec(compile(block, str(GUIDE), "exec"), namespace)
    out = capsys.readouterr().out
    assert out.startswith("tensorplug_mygpu._unary:sqrt True\ntoy\n")  # catalogue_kernels, then the toy backend
    assert "No kernel 'Exp' is registered for backend 'toy'" in out
    assert "toy toy [2.0, 4.0]" in out
    assert "['tensorplug-numpy', 'runtime']" in out
