"""Test sessions: each installs the local distributions it needs into its own virtualenv.

nox                 # every default session
nox -s tests        # core + numpy backend
nox -s core_only    # core with no backend installed
nox -s plugins      # core + numpy + the fixture plugins under tests/fixtures
nox -s tests_torch  # the torch backend alone
nox -s dask         # the dask backend: conformance across chunks, laziness, a LocalCluster
nox -s demo         # the digits demo on numpy and torch, and its plot
nox -s export_onnx  # tensorplug-onnx: the conformance cases exported and run in ONNX Runtime, the demo's model
nox -s custom_kernel  # the worked custom kernel: every backend, its gradient, ONNX, check_kernel
nox -s lint typecheck

Each plugin carries its own tests (plugins/<name>/tests), run by its session; tests/ holds the core's tests and
the ones across plugins.

Each session runs in a new environment holding only the distributions it
installs. With uv installed (`pip install uv`; nox finds it beside itself or
on PATH) environments are made by uv, which hard-links every wheel from its
cache instead of copying it: a second run installs in seconds and torch lies
on disk once however many sessions use it. Without uv, nox falls back to
virtualenv and pip. uv reads neither pip's configuration files nor its PIP_*
variables, so the package sources pip is given on this machine (find-links,
extra index URLs, constraints) are handed to uv as its own variables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache

import nox

nox.options.sessions = [
    "lint",
    "typecheck",
    "tests",
    "core_only",
    "plugins",
    "tests_torch",
    "tests_all",
    "grads_extra",
    "array_api",
    "dask",
    "demo",
    "export_onnx",
    "custom_kernel",
]
nox.options.default_venv_backend = "uv|virtualenv"
# Every run starts each session from an empty environment (isolation: nothing left from an older noxfile); with uv
# that costs seconds, as its cache already holds every wheel.
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True

CORE = "./core"
NUMPY = "./plugins/backend-numpy"
TORCH = "./plugins/backend-torch"
GRADS_EXTRA = "./plugins/grads-extra"
DASK = "./plugins/backend-dask"
ARRAY_API = "./examples/array-api-backend"
ONNX = "./plugins/export-onnx"
SWISH = "./examples/custom-kernel"
# torch must be exactly the version whose CPU build lies on CI's disk; an unpinned torch would fetch a CUDA build.
CONSTRAINTS = ["-c", ".ci/constraints.txt"]
FIXTURES = [
    "./tests/fixtures/tp-fixture-good",
    "./tests/fixtures/tp-fixture-broken",
    "./tests/fixtures/tp-fixture-conflict",
    "./tests/fixtures/tp-fixture-dupname",
    "./tests/fixtures/tp-fixture-hostile",
    "./tests/fixtures/tp-fixture-grown",
    "./tests/fixtures/tp-fixture-abrupt",
    "./tests/fixtures/tp-fixture-legacy",
    "./tests/fixtures/tp-fixture-contract",
]
PYTEST = ["pytest>=8", "hypothesis>=6"]
# pip's settings (its `pip config list` keys and PIP_* variables) that uv needs too, and uv's names for them.
PIP_TO_UV = {
    "find-links": "UV_FIND_LINKS",
    "index-url": "UV_INDEX_URL",
    "extra-index-url": "UV_EXTRA_INDEX_URL",
    "constraint": "UV_CONSTRAINT",
    "no-index": "UV_NO_INDEX",
}


@cache
def pip_settings() -> dict[str, str]:
    """pip's effective settings among PIP_TO_UV's keys: PIP_* variables first, then its configuration files."""
    found: dict[str, str] = {}
    try:
        listed = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        listed = ""  # no pip beside nox: the variables alone
    for line in listed.splitlines():
        name, _, value = line.partition("=")
        section, _, key = name.rpartition(".")
        if key in PIP_TO_UV and section in ("global", "install"):
            found[key] = value.strip().strip("'\"")
    for key in PIP_TO_UV:
        value = os.environ.get("PIP_" + key.upper().replace("-", "_"), "").strip()
        if value:
            found[key] = value
    return found


def uv_environment() -> dict[str, str]:
    """pip's package sources as uv's variables, where the user has not set uv's own.

    uv's strategy across indexes is set to pip's (the best version from any of
    them): with a pin such as torch==2.13.0, the local CPU build in find-links
    (2.13.0+cpu) then wins over an index's 2.13.0, as it does with pip.
    """
    env = {"UV_INDEX_STRATEGY": "unsafe-best-match"}
    for key, value in pip_settings().items():
        if key == "find-links":
            value = ",".join(value.split())  # pip separates them with spaces, uv with commas
        env[PIP_TO_UV[key]] = value
    return {name: value for name, value in env.items() if name not in os.environ}


def install(session: nox.Session, *args: str) -> None:
    """``session.install`` with torch held to its pin, and pip's package sources given to uv where uv installs."""
    env = uv_environment() if session.venv_backend == "uv" else {}
    session.install(*CONSTRAINTS, *args, env=env)


def uninstall(session: nox.Session, *distributions: str) -> None:
    if session.venv_backend == "uv":
        session.run("uv", "pip", "uninstall", *distributions)
    else:
        session.run("python", "-m", "pip", "uninstall", "--yes", *distributions)


@nox.session
def tests(session: nox.Session) -> None:
    """The core with the NumPy backend: unit tests, the NumPy backend's own tests, gradient checks, doctests."""
    install(session, f"{CORE}[bench]", NUMPY, *PYTEST)  # [bench]: HIPS autograd, timed for comparison
    session.run("pytest", "tests/unit", f"{NUMPY}/tests", *session.posargs)
    session.run("pytest", "--doctest-modules", "--pyargs", "tensorplug", "tensorplug_numpy", "-p", "no:cacheprovider")


@nox.session
def core_only(session: nox.Session) -> None:
    """The core alone: importing works, and the first op says which backend to install."""
    install(session, CORE, *PYTEST)
    session.run("pytest", "tests/core_only", *session.posargs)


@nox.session
def plugins(session: nox.Session) -> None:
    """Discovery, isolation, allowlists, strict mode and lazy imports with real installed plugins."""
    install(session, CORE, NUMPY, *FIXTURES, *PYTEST)
    session.run("pytest", "tests/plugins", *session.posargs)


@nox.session
def tests_torch(session: nox.Session) -> None:
    """The core with the torch backend alone: the conformance suite and gradient checks on torch (CPU here)."""
    install(session, "torch==2.13.0")
    install(session, CORE, TORCH, *PYTEST)
    session.run("pytest", f"{TORCH}/tests", *session.posargs)


@nox.session
def tests_all(session: nox.Session) -> None:
    """Every distribution installed together: numpy and torch side by side, moving data, differential tests."""
    install(session, "torch==2.13.0")
    install(session, CORE, NUMPY, TORCH, *PYTEST)
    session.run("pytest", "tests/all", "tests/unit", f"{NUMPY}/tests", *session.posargs)


@nox.session
def grads_extra(session: nox.Session) -> None:
    """tensorplug-grads-extra really installed (its overrides apply), then uninstalled (they are gone).

    It changes gradients on purpose (singularities, not-differentiable kernels); `tensorplug check numpy`
    must still pass with it installed (the conformance suite checks the core's gradients) and name its
    overrides. It is kept out of tests_all, whose unit tests check the core's gradients directly.
    """
    install(session, CORE, NUMPY, GRADS_EXTRA, *PYTEST)
    session.run("pytest", f"{GRADS_EXTRA}/tests/installed", *session.posargs)
    uninstall(session, "tensorplug-grads-extra")
    session.run("pytest", f"{GRADS_EXTRA}/tests/uninstalled", *session.posargs)


@nox.session
def array_api(session: nox.Session) -> None:
    """The worked external backend over array_api_strict (numpy as its fallback): the conformance suite, its README."""
    install(session, CORE, NUMPY, ARRAY_API, "array-api-strict>=2.3", *PYTEST)
    session.run("pytest", "examples/array-api-backend/tests", *session.posargs)


@nox.session
def dask(session: nox.Session) -> None:
    """The dask backend: the conformance suite on chunks of two elements (known gaps: its tests' conftest.py),
    laziness, persist, debug mode and moves, and docs/dask.md's example on a LocalCluster (127.0.0.1, 2 workers).
    """
    install(session, CORE, NUMPY, f"{DASK}[distributed]", *PYTEST)
    session.run("pytest", f"{DASK}/tests", "--tensorplug-backend", "dask", "--tensorplug-strict", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """README's first command: the digits demo on numpy and on torch (above 95 % held out), and its --plot PNG."""
    install(session, "torch==2.13.0")
    install(session, f"{CORE}[plot]", NUMPY, TORCH, *PYTEST)
    session.run("pytest", "tests/demo", *session.posargs)


@nox.session
def export_onnx(session: nox.Session) -> None:
    """tensorplug-onnx with onnx and ONNX Runtime (pinned in .ci/constraints.txt): every conformance case whose
    kernels export, run in ONNX Runtime against the numpy backend by the exporter conformance kit (its summary
    is printed at the end), the refusals, dynamic axes, the digits demo's model, the plugin's README and doctests."""
    install(session, CORE, NUMPY, f"{ONNX}[test]", "onnx", "onnxruntime", *PYTEST)
    session.run("pytest", f"{ONNX}/tests", "--tensorplug-exporter", "onnx", "--tensorplug-strict", *session.posargs)
    session.run("pytest", "--doctest-modules", "--pyargs", "tensorplug_onnx", "-p", "no:cacheprovider")


@nox.session
def custom_kernel(session: nox.Session) -> None:
    """The worked custom kernel (Swish, declared for numpy only, with its decomposition, gradient and ONNX
    translation) installed beside numpy, torch, dask and the ONNX exporter: it runs on each backend as that
    backend's ops, differentiates, exports and runs in ONNX Runtime, and passes tp.testing.check_kernel."""
    install(session, "torch==2.13.0")
    install(session, CORE, NUMPY, TORCH, DASK, ONNX, SWISH, "onnx", "onnxruntime", *PYTEST)
    session.run("pytest", f"{SWISH}/tests", *session.posargs)
    session.run("pytest", "--doctest-modules", "--pyargs", "tensorplug_swish", "-p", "no:cacheprovider")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and format check over every distribution, the tests and the tools."""
    install(session, "ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the core and the NumPy backend."""
    install(session, "torch==2.13.0")
    install(
        session,
        "mypy>=1.10",
        "pytest>=8",
        f"{CORE}[plot]",
        NUMPY,
        TORCH,
        GRADS_EXTRA,
        ARRAY_API,
        f"{DASK}[distributed]",
        ONNX,
        SWISH,
    )
    session.run(
        "mypy",
        "--strict",
        "core/src/tensorplug",
        "core/src/_tensorplug_pytest.py",
        "core/src/_tensorplug_cli.py",
        "plugins/backend-numpy/src/tensorplug_numpy",
        "plugins/backend-torch/src/tensorplug_torch",
        "plugins/grads-extra/src/tensorplug_grads_extra",
        "plugins/backend-dask/src/tensorplug_dask",
        "examples/array-api-backend/src/tensorplug_array_api",
        "plugins/export-onnx/src/tensorplug_onnx",
        "examples/custom-kernel/src/tensorplug_swish",
    )
