"""docs/custom-kernels.md ("Writing a custom kernel"): its python blocks run, in order, in one namespace, and
print what the page says they print."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tensorplug as tp

GUIDE = Path(__file__).resolve().parents[3] / "docs" / "custom-kernels.md"


def test_the_guide_runs_and_prints_what_it_says(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("onnxruntime")
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 6, "docs/custom-kernels.md lost its examples"
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), namespace)
    out = capsys.readouterr().out
    assert "[-0.3034  0.      1.944 ]\n" in out
    for name in tp.list_backends():
        assert f"{name} True [-0.3034, 0.0, 1.944]\n" in out
    assert "runtime {'decomposition:runtime'}\n" in out
    assert "[-0.0641  0.7828  1.0693]\n" in out
    assert "['Softplus', 'Tanh', 'Mul', 'Mul']\n" in out
    assert out.count("True\n") >= 2
    assert "0 True\n" in out  # check_kernel: no failure
