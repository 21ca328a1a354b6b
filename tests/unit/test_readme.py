"""Every ```python block of README.md runs, in order, in one namespace; so does every block of docs/tour.md,
the tour the README points to, in a namespace of its own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TOUR = ROOT / "docs" / "tour.md"


def run_blocks(page: Path) -> None:
    """Run a page's python blocks in order, in one namespace."""
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)
    assert blocks, f"{page.name} has no python block"
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)


def test_readme_python_blocks_run(capsys: pytest.CaptureFixture[str], tensorplug_registries: None) -> None:
    run_blocks(README)  # its Square2 kernel and gradient go with the fixture
    out = capsys.readouterr().out
    assert out == "numpy [[0.0, 1.0], [1.0, 15.0]]\n[[2.0, 4.0], [6.0, 8.0]]\n[1. 2.]\n6.0\n"


def test_readme_is_a_front_page_linking_every_guide() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    assert "python3 -m pip install nox uv && python3 -m nox" in text  # the command .ci/run runs
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in text, f"README.md does not link docs/{page.name}"
    assert "](CHANGELOG.md)" in text


def test_tour_python_blocks_run(capsys: pytest.CaptureFixture[str], tensorplug_registries: None) -> None:
    run_blocks(TOUR)  # its Cube kernel and gradient go with the fixture
    out = capsys.readouterr().out
    assert "numpy (2, 2) float32" in out
    assert "12." in out
    assert "True [4.0, 6.0]" in out
    assert "[[3.0, 0.0], [3.0, 0.0]]" in out  # the gradient through an indexing
    assert "0.0 [1. 2.]" in out  # Adam found the least-squares solution
    assert "[3. 4.] [[2. 1.]\n [4. 3.]] [[1. 3.]]" in out  # indexing as numpy does it
    assert "[1. 1.]\n[1. 1.]\n" in out  # the overridden Relu gradient, then the clipped custom gradient
    assert "['model.w', 'optimizer.config.beta1'] {'epoch': 1} True\nTrue 1\n" in out  # a checkpoint saved, restored
