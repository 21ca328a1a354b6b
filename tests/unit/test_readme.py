"""Every ```python block of README.md runs, in order, in one namespace; those that import onnxruntime need the
ONNX exporter plugin, and run in its session (plugins/export-onnx/tests/test_readme_onnx.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_blocks_run(capsys: pytest.CaptureFixture[str], tensorplug_registries: None) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks, "README.md has no python block"
    blocks = [block for block in blocks if "import onnxruntime" not in block]
    namespace: dict[str, object] = {}
    for block in blocks:  # the README's registrations (its Cube kernel and gradient) go with the fixture
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "numpy (2, 2) float32" in out
    assert "12." in out
    assert "True [4.0, 6.0]" in out
    assert "[[3.0, 0.0], [3.0, 0.0]]" in out  # the gradient through an indexing
    assert "0.0 [1. 2.]" in out  # Adam found the least-squares solution
    assert "[3. 4.] [[2. 1.]\n [4. 3.]] [[1. 3.]]" in out  # indexing as numpy does it
    assert "[1. 1.]\n[1. 1.]\n" in out  # the overridden Relu gradient, then the clipped custom gradient
    assert "[0. 0. 1.]" in out
    assert "['BatchMatMul', 'Square', 'Mean']" in out  # what tp.profile saw of the forward pass
    assert "True\n" in out
    assert "['model.w', 'optimizer.config.beta1'] {'epoch': 1} True\nTrue 1\n" in out  # a checkpoint saved, restored
    assert "1 20 True\n" in out  # tp.function: one trace, 20 Adam steps, the loss went down
    assert "[0.0] [2.7182819843292236] 2\n['Exp']\n" in out  # static arguments retrace; a replay profiled
    assert "[0.25, inf]\nRealDiv Sqrt\n" in out  # what tp.debug caught: the inf made by the gradient of Sqrt
    assert "(device cpu) returned inf in the backward pass, in the gradient of 'Sqrt': 1 inf of 2 elements" in out
