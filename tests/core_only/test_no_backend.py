"""The core with no backend installed: importing works, the first op says what to install, and a
backend registered at run time is enough to compute.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

INSTALL_HINT = "pip install ./plugins/backend-numpy"


def test_import_works_and_lists_no_backend() -> None:
    assert tp.list_backends() == []
    # only the core's built-in plugin (its gradients) is there
    assert [(p.name, p.distribution, p.status) for p in tp.plugins()] == [("tensorplug", "tensorplug", "loaded")]


@pytest.mark.parametrize(
    "first_op",
    [lambda: tp.tensor(1.0), lambda: tp.ones(3), lambda: tp.zeros((2, 2)), lambda: tp.get_backend()],
    ids=["tensor", "ones", "zeros", "get_backend"],
)
def test_first_op_names_the_package_to_install(first_op: Any) -> None:
    with pytest.raises(tp.NoBackendError, match=INSTALL_HINT):
        first_op()


class MiniBackend(tp.Backend):
    """A backend written in a few lines: numpy arrays, with a kernel for Add only."""

    device = "cpu"

    def from_host(self, array: np.ndarray) -> Any:
        return np.array(array, copy=True)

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw)

    def dtype_of(self, raw: Any) -> str:
        return str(raw.dtype.name)


def mini_add(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return np.add(inputs["a"], inputs["b"])


@pytest.fixture
def mini() -> Iterator[str]:
    """Register the backend "mini" and its Add kernel at run time; remove both afterwards."""
    tp.register_backend("mini", MiniBackend)
    tp.register_kernel("Add", "mini", mini_add)
    try:
        yield "mini"
    finally:
        if tp.get_kernel("Add", "mini") is not None:
            tp.unregister_kernel("Add", "mini")
        if "mini" in tp.list_backends():
            tp.remove_backend("mini")


def test_runtime_backend_makes_ops_work(mini: str) -> None:
    assert tp.list_backends() == [mini]
    assert tp.get_backend() == mini
    total = tp.add(tp.tensor([1.0, 2.0]), tp.tensor([3.0, 4.0]))
    assert total.backend == mini
    assert total.tolist() == [4.0, 6.0]
    assert isinstance(tp.backend(), MiniBackend)
    assert tp.get_kernel("Add", mini).source == "runtime"
    with pytest.raises(tp.KernelNotFoundError, match=r"'Sub'.*'mini'"):
        tp.sub(total, total)


def test_removing_the_runtime_backend_brings_the_hint_back(mini: str) -> None:
    assert tp.tensor([1.0, 2.0]).backend == mini
    tp.unregister_kernel("Add", mini)
    tp.remove_backend(mini)
    assert tp.list_backends() == []
    with pytest.raises(tp.NoBackendError, match=INSTALL_HINT):
        tp.ones(2)


def test_fresh_import_warns_nothing_and_imports_no_heavy_module(tmp_path: Path) -> None:
    # An importable stand-in for torch, so that any `import torch` would show up in sys.modules.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text("")
    code = """
        import importlib.util, json, sys, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import tensorplug as tp
        print(json.dumps({
            "warnings": [str(w.message) for w in caught],
            "torch_imported": "torch" in sys.modules,
            "safetensors_imported": "safetensors" in sys.modules,  # imported by tp.save / tp.load, not before
            "safetensors_installed": importlib.util.find_spec("safetensors") is not None,  # a dependency
            "torch_origin": importlib.util.find_spec("torch").origin,
            "backends": tp.list_backends(),
        }))
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("TENSORPLUG_")}
    env["PYTHONPATH"] = str(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-P", "-c", textwrap.dedent(code)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["torch_origin"].startswith(str(tmp_path))
    assert out["torch_imported"] is False
    assert out["safetensors_imported"] is False
    assert out["safetensors_installed"] is True
    assert out["warnings"] == []
    assert out["backends"] == []
