"""The ``tensorplug`` command: ``check`` and ``new-backend``, in process and as installed scripts.

The last test is the promise to backend authors: a generated skeleton installs
into a fresh virtualenv (with the core from this repository and pytest, nothing
else) and passes its own tests there, conformance suite included.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tensorplug._tools._cli import COMMANDS, main
from tensorplug._tools._scaffold import FILES

REPO = Path(__file__).resolve().parents[2]


def run(*command: str | Path, cwd: Path | None = None, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV"))}
    return subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def script(name: str) -> Path:
    """A console script installed beside this interpreter (bin/ or Scripts/)."""
    folder = Path(sys.executable).parent
    found = [p for p in (folder / name, folder / f"{name}.exe") if p.exists()]
    assert found, f"{name} is not installed beside {sys.executable}"
    return found[0]


# -- the command table and --help ------------------------------------------------------


def test_the_console_script_lists_every_command(tmp_path: Path) -> None:
    result = run(script("tensorplug"), "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for command in COMMANDS:
        assert command.name in result.stdout
    assert {c.name for c in COMMANDS} >= {"check", "new-backend"}


def test_no_command_prints_the_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "new-backend" in capsys.readouterr().err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import tensorplug as tp

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"tensorplug {tp.__version__}"


# -- check ---------------------------------------------------------------------------


def test_check_runs_the_suite_on_numpy_with_python_m(tmp_path: Path) -> None:
    (tmp_path / "test_unrelated.py").write_text("def test_unrelated():\n    raise AssertionError\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = --this-option-does-not-exist\n")
    result = run(sys.executable, "-m", "tensorplug", "check", "numpy", "-q", "-k", "Add", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"^tensorplug conformance \(numpy\): \d+ passed, 0 failed, 0 missing kernels", result.stdout, re.M)
    assert "test_unrelated" not in result.stdout  # the project's own tests and settings stay out of it


def test_check_returns_pytest_usage_error_for_an_unknown_backend(tmp_path: Path) -> None:
    result = run(script("tensorplug"), "check", "nosuch", cwd=tmp_path)
    assert result.returncode == 4
    assert "no such backend is installed; installed: " in result.stderr
    assert "numpy" in result.stderr.partition("installed: ")[2]


# -- new-backend -----------------------------------------------------------------------


def test_new_backend_writes_the_skeleton(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "out"
    assert main(["new-backend", "my_gpu", str(target)]) == 0
    written = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert written == sorted(name.replace("$package", "tensorplug_my_gpu") for name in FILES)
    assert "pip install -e" in capsys.readouterr().out

    project = tomllib.loads((target / "pyproject.toml").read_text())
    assert project["project"]["name"] == "tensorplug-my-gpu"
    assert project["project"]["entry-points"]["tensorplug"] == {"my_gpu": "tensorplug_my_gpu.plugin"}
    assert project["build-system"]["build-backend"] == "hatchling.build"
    assert any(d.startswith("tensorplug>=") for d in project["project"]["dependencies"])
    assert "--tensorplug-backend=my_gpu" in project["tool"]["pytest"]["ini_options"]["addopts"]
    package = target / "src" / "tensorplug_my_gpu"
    for path in [*package.glob("*.py"), target / "tests" / "test_conformance.py"]:
        compile(path.read_text(), str(path), "exec")  # valid Python, every placeholder filled
        assert "$" not in path.read_text(), path
    assert "class MyGpuBackend(Backend)" in (package / "_backend.py").read_text()
    assert '"tensorplug_my_gpu._kernels:add"' in (package / "plugin.py").read_text()


def test_new_backend_defaults_to_a_directory_named_after_the_distribution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["new-backend", "mine"]) == 0
    assert (tmp_path / "tensorplug-mine" / "src" / "tensorplug_mine" / "plugin.py").exists()


@pytest.mark.parametrize("name", ["My-GPU", "1gpu", "gpu-2", "", "Gpu", "gpu.x"])
def test_new_backend_refuses_a_bad_name(tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-backend", name, str(tmp_path / "out")]) == 2
    assert "invalid backend name" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_new_backend_refuses_a_non_empty_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["new-backend", "mine", str(tmp_path)]) == 2
    assert "not an empty directory" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["new-backend", "mine", str(empty)]) == 0  # an empty one is fine


def test_a_generated_backend_installs_in_a_fresh_venv_and_passes_its_own_tests(tmp_path: Path) -> None:
    target = tmp_path / "tensorplug-skel"
    assert run(script("tensorplug"), "new-backend", "skel", target).returncode == 0
    venv = tmp_path / "venv"
    created = run(sys.executable, "-m", "venv", venv)  # no system site-packages: nothing is there but pip
    assert created.returncode == 0, created.stderr
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    installed = run(python, "-m", "pip", "install", "-q", REPO / "core", "pytest", timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    installed = run(python, "-m", "pip", "install", "-q", target, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]

    result = run(python, "-m", "pytest", "-p", "no:cacheprovider", cwd=target)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    headline = re.search(
        r"^tensorplug conformance \(skel\): (\d+) passed, 0 failed, (\d+) skipped, ", result.stdout, re.M
    )
    assert headline, result.stdout[-3000:]
    assert int(headline.group(1)) > 20  # Add and Multiply pass their value cases
    # Add and Multiply, and the kernels the core decomposes into them (Square, as x * x), run as its ops
    decomposed = re.search(r"run as their decomposition, (\d+) of them passing", result.stdout)
    assert decomposed, result.stdout[-3000:]
    assert f"  kernels: {2 + int(decomposed.group(1))} passing, 0 failing, " in result.stdout
    assert "test_conformance.py ..." in result.stdout  # the project's own three tests

    strict = run(
        python, "-m", "pytest", "-p", "no:cacheprovider", "--tensorplug-strict", "-k", "Abs-float32", cwd=target
    )
    assert strict.returncode == 1
    assert "kernel Abs not registered for backend skel (--tensorplug-strict)" in strict.stdout
