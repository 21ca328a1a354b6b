"""README.md's ONNX block (the one that imports onnxruntime) runs here, where the plugin and onnxruntime are
installed; the core's README test leaves it out."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_onnx_block_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    onnx_blocks = [block for block in blocks if "import onnxruntime" in block]
    assert len(onnx_blocks) == 1, "README.md should have one block that runs an export in ONNX Runtime"
    namespace: dict[str, object] = {}
    exec("import tensorplug as tp", namespace)
    exec(compile(onnx_blocks[0], str(README), "exec"), namespace)
    assert capsys.readouterr().out == "True\n"
