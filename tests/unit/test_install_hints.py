"""Every install hint the code can print names a folder of the checkout, never an unpublished distribution name."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "core" / "src", *sorted((ROOT / "plugins").glob("*/src"))]
# Packages their owners publish on PyPI, which a hint may name as they are.
PUBLISHED_ELSEWHERE = {"matplotlib", "autograd", "jax"}
HINT = re.compile(r"pip install\s+([^\s`\"),]+)")


def hints_in_sources() -> list[tuple[str, str]]:
    found = []
    for src in SOURCES:
        for path in sorted(src.rglob("*.py")):
            for match in HINT.finditer(path.read_text(encoding="utf-8")):
                found.append((str(path.relative_to(ROOT)), match.group(1)))
    return found


def names_a_path(target: str) -> bool:
    bare = target.strip("'")
    return bare.startswith("./") or bare == "-e" or bare in PUBLISHED_ELSEWHERE


def test_every_pip_install_in_the_sources_names_a_checkout_folder() -> None:
    hints = hints_in_sources()
    assert len(hints) >= 5
    bare = [
        (path, target)
        for path, target in hints
        if not names_a_path(target) and not path.endswith("_runtime/_install.py")  # its f-strings build the hints
    ]
    assert bare == []


def test_the_hint_folders_hold_the_distributions_they_name() -> None:
    from tensorplug._runtime._install import CHECKOUT_FOLDERS, pip_install

    for distribution, folder in CHECKOUT_FOLDERS.items():
        project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
        assert project["name"] == distribution
    assert pip_install("tensorplug-onnx") == "pip install ./plugins/export-onnx"
    assert pip_install("tensorplug", "plot") == "pip install './core[plot]'"


def test_an_unknown_export_format_names_the_onnx_folder() -> None:
    with pytest.raises(tp.ExportError) as caught:
        tp.export(lambda x: x * 2.0, tp.tensor(np.ones(2, np.float32)), format="tflite")
    assert "pip install ./plugins/export-onnx" in str(caught.value)
    assert "pip install tensorplug-onnx" not in str(caught.value)


def test_the_backend_hint_names_the_backend_folders() -> None:
    from tensorplug._runtime._engine import INSTALL_HINT

    assert "pip install ./plugins/backend-numpy" in INSTALL_HINT
    assert "pip install ./plugins/backend-torch" in INSTALL_HINT
