"""Every ```python block of docs/authoring.md runs, in order, in one namespace; so do those of
docs/checkpoints.md, docs/plugins.md, docs/tracing.md, docs/backends.md and docs/dask.md, each page in its own
namespace (docs/tour.md's run in tests/unit/test_readme.py, docs/export.md's ONNX block in the export-onnx
plugin's tests)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"
CHECKPOINTS = GUIDE.parent / "checkpoints.md"


def run_page(name: str) -> None:
    """Run the python blocks of docs/<name> in order, in one namespace."""
    page = GUIDE.parent / name
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)
    assert blocks, f"docs/{name} has no python block"
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)


def test_plugins_page_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    run_page("plugins.md")
    assert capsys.readouterr().out == "[0. 0. 1.]\n"  # the guided Relu gradient: positive dy at positive x only


def test_tracing_page_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    run_page("tracing.md")
    out = capsys.readouterr().out
    assert "['BatchMatMul', 'Square', 'Mean']" in out  # what tp.profile saw of the forward pass
    assert "True\n" in out
    assert "1 20 True\n" in out  # tp.function: one trace, 20 Adam steps, the loss went down
    assert "[0.0] [2.7182819843292236] 2\n['Exp']\n" in out  # static arguments retrace; a replay profiled
    assert "[0.25, inf]\nRealDiv Sqrt\n" in out  # what tp.debug caught: the inf made by the gradient of Sqrt
    assert "(device cpu) returned inf in the backward pass, in the gradient of 'Sqrt': 1 inf of 2 elements" in out


def test_backends_page_python_blocks_run(capsys: pytest.CaptureFixture[str], tensorplug_registries: None) -> None:
    run_page("backends.md")
    out = capsys.readouterr().out
    assert "['x', 'filter'] ['strides', 'pad'," in out  # Conv2D's entry in the kernel reference
    assert "none\nTanh (0,)\n" in out  # FloorDiv not differentiable; a one-line gradient rule's spec


def test_dask_page_python_block_runs_where_dask_is_installed(capsys: pytest.CaptureFixture[str]) -> None:
    run_page("dask.md")  # guarded: prints nothing without the dask backend (its own tests run it with dask)
    import tensorplug as tp

    tp.set_backend("numpy")
    assert capsys.readouterr().out in ("", "91.0\n")


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
    assert "passed passed\n- output dtypes on numpy, example 1 (x: float32[4]): output 0 has dtype float64, " in out


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
