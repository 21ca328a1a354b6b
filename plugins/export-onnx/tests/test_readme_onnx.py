"""docs/export.md's ONNX block (the one that imports onnxruntime) runs here, where the plugin and onnxruntime are
installed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "export.md"


def test_export_guide_onnx_block_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    onnx_blocks = [block for block in blocks if "import onnxruntime" in block]
    assert len(onnx_blocks) == 1, "docs/export.md should have one block that runs an export in ONNX Runtime"
    namespace: dict[str, object] = {}
    exec("import tensorplug as tp", namespace)
    exec(compile(onnx_blocks[0], str(GUIDE), "exec"), namespace)
    assert capsys.readouterr().out == "True\n"
