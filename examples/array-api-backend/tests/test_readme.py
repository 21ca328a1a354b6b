"""Every ```python block of the README (the tutorial) runs, in order, in one namespace (``py`` blocks are excerpts)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tensorplug as tp

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_readme_python_blocks_run(strict: None, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "array_api float32 [[0.0, 0.0], [5.0, 12.0]]" in out
    assert "array_api_strict" in out
    assert "array_api numpy [10. 20.]" in out
    assert "[8.0, 27.0]" in out
    fallback_line = next(line for line in out.splitlines() if "'Erf'" in line and "'ScatterNd'" in line)
    assert all(f"'{kernel}'" in fallback_line for kernel in ("Erf", "Einsum", "ScatterNd"))
    assert "'Softsign'" not in fallback_line
    assert "['HardSwish', 'Softsign']\n" in out  # newer than the backend: run as the core's decompositions
    assert "\n[]\n" in out  # and none missing
    assert tp.get_kernel("Cube", "array_api") is None
