"""Every ```python block of plugins/export-onnx/README.md runs, in order, in one namespace (in a temporary folder,
where its model is written)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"  # the distribution's


def test_readme_python_blocks_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert len(blocks) == 2
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "[1 0] [1 0]\n" in out
    assert "['x'] ['probabilities', 'label']\n" in out
    assert "the kernel 'RandomNormal' (made by tp.random_normal) draws random numbers" in out
    assert (tmp_path / "classify.onnx").is_file()
