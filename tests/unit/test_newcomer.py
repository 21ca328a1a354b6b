"""What a newcomer meets first: ``tensorplug check`` without pytest says what to install, the names loaded on first
use are listed by ``dir(tp)`` and ``help(tp)`` without being imported, and a gradient function called the way
``tp.variable_grads`` is called says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import numpy as np
import pluggy
import pytest

import tensorplug as tp

REPO = Path(__file__).resolve().parents[2]
LAZY = sorted(tp._LAZY)  # function, train, datasets, profile, debug, time, persist, coverage, initializers...
LAZY_MODULES = sorted({module for module, _ in tp._LAZY.values()})


# -- tensorplug check without pytest --------------------------------------------------------------------------------


def test_the_test_extra_installs_pytest() -> None:
    project = tomllib.loads((REPO / "core" / "pyproject.toml").read_text())
    assert any(r.startswith("pytest") for r in project["project"]["optional-dependencies"]["test"])


@pytest.fixture(scope="module")
def python_without_pytest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A virtualenv's python that sees tensorplug (this tree), numpy and pluggy, and no pytest."""
    root = tmp_path_factory.mktemp("no-pytest")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(root / "env")
    python = root / "env" / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    deps = root / "deps"  # numpy and pluggy only: their site-packages folder also holds pytest
    deps.mkdir()
    for package in (Path(np.__file__).parent, Path(pluggy.__file__).parent):
        (deps / package.name).symlink_to(package)
        libs = package.parent / f"{package.name}.libs"  # a wheel's bundled shared libraries
        if libs.exists():
            (deps / libs.name).symlink_to(libs)
    (site / "tensorplug_paths.pth").write_text(f"{deps}\n{REPO / 'core' / 'src'}\n")
    return python


def test_check_without_pytest_says_to_install_the_test_extra(python_without_pytest: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV") and not k.startswith("PYTEST")}
    probe = subprocess.run([python_without_pytest, "-c", "import pytest"], capture_output=True, text=True, env=env)
    assert probe.returncode != 0
    assert "No module named 'pytest'" in probe.stderr
    result = subprocess.run(
        [python_without_pytest, "-m", "tensorplug", "check", "numpy"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 2
    assert "pip install './core[test]'" in result.stderr
    assert "pytest" in result.stderr
    assert "Traceback" not in result.stderr


# -- dir(tp) and help(tp) --------------------------------------------------------------------------------------------


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_dir_lists_the_names_loaded_on_first_use_without_importing_them() -> None:
    code = (
        "import json, sys\n"
        "import tensorplug as tp\n"
        "after_import = sorted(m for m in sys.modules if m.startswith('tensorplug'))\n"
        "names = dir(tp)\n"
        "after_dir = sorted(m for m in sys.modules if m.startswith('tensorplug'))\n"
        "print(json.dumps([names, after_import, after_dir]))\n"
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    names, after_import, after_dir = json.loads(result.stdout)
    for name in ["function", "train", "datasets", "profile", "debug", "time", "persist", "coverage", "initializers"]:
        assert name in names
    assert [n for n in LAZY if n not in names] == []
    assert names == sorted(names)
    assert after_dir == after_import  # listing them imports nothing
    assert [m for m in LAZY_MODULES if m in after_import and m != "tensorplug._runtime._lazy"] == []


def test_help_documents_the_names_loaded_on_first_use() -> None:
    result = run_python("import pydoc, tensorplug as tp; print(pydoc.render_doc(tp, renderer=pydoc.plaintext))")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for name in ["function", "debug", "profile", "persist", "coverage", "Function", "Program", "Coverage"]:
        assert f"\n    {name}(" in text or f"\n    class {name}(" in text, name
    assert "tp.time" in text  # public, but out of __all__ (a star import must not shadow the time module)
    assert "tp.initializers" in text


def test_lazy_names_still_load_on_first_use() -> None:
    assert tp.initializers.he_normal((2, 2), seed=0).shape == (2, 2)
    assert callable(tp.function)
    assert callable(tp.time)


# -- a gradient function called like variable_grads -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["grad", "value_and_grad", "grads", "value_and_grads"])
def test_gradient_function_called_with_no_argument_hints_at_variable_grads(name: str) -> None:
    w = tp.variable([1.0, 2.0], name="w")
    df = getattr(tp, name)(lambda: tp.sum(w * w))
    with pytest.raises(tp.GradientError, match=rf"^{name}: .*called with none.*tp\.variable_grads\(f\)"):
        df()


@pytest.mark.parametrize("name", ["grad", "value_and_grad"])
def test_function_of_no_argument_given_one_hints_at_variable_grads(name: str) -> None:
    w = tp.variable([1.0, 2.0], name="w")
    with pytest.raises(
        tp.GradientError, match=r"f \(<lambda>\(\)\) cannot be called with the 1 tensor.*variable_grads"
    ):
        getattr(tp, name)(lambda: tp.sum(w * w))(w)


def test_arity_mismatch_of_grads_is_named() -> None:
    a = tp.tensor([1.0, 2.0])
    with pytest.raises(tp.GradientError, match=r"value_and_grads: f \(<lambda>\(a, b\)\) cannot be called with the 1"):
        tp.value_and_grads(lambda a, b: tp.sum(a * b))([a])


def test_type_errors_inside_f_are_left_alone() -> None:
    def f(x: tp.Tensor) -> tp.Tensor:
        return tp.sum(x) + "a string"  # type: ignore[operator]

    with pytest.raises(TypeError) as info:
        tp.grad(f)(tp.tensor([1.0]))
    assert not isinstance(info.value, tp.TensorplugError) or "cannot be called" not in str(info.value)
