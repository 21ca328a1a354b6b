"""Every ```python block of docs/authoring.md runs, in order, in one namespace; so do those of
docs/checkpoints.md."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"
CHECKPOINTS = GUIDE.parent / "checkpoints.md"


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


def test_checkpoints_page_python_blocks_run_and_print_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    text = CHECKPOINTS.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2, "docs/checkpoints.md lost its examples"
    namespace: dict[str, object] = {}
    try:
        for block in blocks:
            exec(compile(block, str(CHECKPOINTS), "exec"), namespace)
    finally:
        shutil.rmtree(str(namespace["folder"]), ignore_errors=True)
    out = capsys.readouterr().out
    printed = re.search(r"prints\n\n```\n(.*?)```", text, flags=re.DOTALL)
    assert printed is not None
    assert out.startswith(printed.group(1))
    assert out.endswith("float32 3\n")
    assert "prints `float32 3`" in text
