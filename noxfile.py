"""Test sessions: each installs the local distributions it needs into its own virtualenv.

nox                 # every default session
nox -s tests        # core + numpy backend
nox -s core_only    # core with no backend installed
nox -s plugins      # core + numpy + the fixture plugins under tests/fixtures
nox -s dask         # the dask backend: conformance across chunks, laziness, a LocalCluster
nox -s demo         # the digits demo on numpy and torch, and its plot
nox -s lint typecheck
"""

from __future__ import annotations

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
]
nox.options.reuse_existing_virtualenvs = False
nox.options.error_on_missing_interpreters = True

CORE = "./core"
NUMPY = "./plugins/backend-numpy"
TORCH = "./plugins/backend-torch"
GRADS_EXTRA = "./plugins/grads-extra"
DASK = "./plugins/backend-dask"
ARRAY_API = "./examples/array-api-backend"
# torch must be exactly the version whose CPU build lies on CI's disk; an unpinned torch would fetch a CUDA build.
CONSTRAINTS = ["-c", ".ci/constraints.txt"]
FIXTURES = [
    "./tests/fixtures/tp-fixture-good",
    "./tests/fixtures/tp-fixture-broken",
    "./tests/fixtures/tp-fixture-conflict",
    "./tests/fixtures/tp-fixture-dupname",
    "./tests/fixtures/tp-fixture-hostile",
    "./tests/fixtures/tp-fixture-grown",
]
PYTEST = ["pytest>=8", "hypothesis>=6"]


@nox.session
def tests(session: nox.Session) -> None:
    """The core with the NumPy backend: unit tests, gradient checks, doctests."""
    session.install(f"{CORE}[bench]", NUMPY, *PYTEST)  # [bench]: HIPS autograd, timed for comparison
    session.run("pytest", "tests/unit", *session.posargs)
    session.run("pytest", "--doctest-modules", "--pyargs", "tensorplug", "tensorplug_numpy", "-p", "no:cacheprovider")


@nox.session
def core_only(session: nox.Session) -> None:
    """The core alone: importing works, and the first op says which backend to install."""
    session.install(CORE, *PYTEST)
    session.run("pytest", "tests/core_only", *session.posargs)


@nox.session
def plugins(session: nox.Session) -> None:
    """Discovery, isolation, allowlists, strict mode and lazy imports with real installed plugins."""
    session.install(CORE, NUMPY, *FIXTURES, *PYTEST)
    session.run("pytest", "tests/plugins", *session.posargs)


@nox.session
def tests_torch(session: nox.Session) -> None:
    """The core with the torch backend alone: the conformance suite and gradient checks on torch (CPU here)."""
    session.install(*CONSTRAINTS, "torch==2.13.0")
    session.install(*CONSTRAINTS, CORE, TORCH, *PYTEST)
    session.run("pytest", "tests/torch", *session.posargs)


@nox.session
def tests_all(session: nox.Session) -> None:
    """Every distribution installed together: numpy and torch side by side, moving data, differential tests."""
    session.install(*CONSTRAINTS, "torch==2.13.0")
    session.install(*CONSTRAINTS, CORE, NUMPY, TORCH, *PYTEST)
    session.run("pytest", "tests/all", "tests/unit", *session.posargs)


@nox.session
def grads_extra(session: nox.Session) -> None:
    """tensorplug-grads-extra really installed (its overrides apply), then uninstalled (they are gone).

    It changes gradients on purpose (singularities, not-differentiable kernels); `tensorplug check numpy`
    must still pass with it installed (the conformance suite checks the core's gradients) and name its
    overrides. It is kept out of tests_all, whose unit tests check the core's gradients directly.
    """
    session.install(CORE, NUMPY, GRADS_EXTRA, *PYTEST)
    session.run("pytest", "tests/grads_extra/installed", *session.posargs)
    session.run("python", "-m", "pip", "uninstall", "--yes", "tensorplug-grads-extra")
    session.run("pytest", "tests/grads_extra/uninstalled", *session.posargs)


@nox.session
def array_api(session: nox.Session) -> None:
    """The worked external backend over array_api_strict (numpy as its fallback): the conformance suite, its README."""
    session.install(CORE, NUMPY, ARRAY_API, "array-api-strict>=2.3", *PYTEST)
    session.run("pytest", "examples/array-api-backend/tests", *session.posargs)


@nox.session
def dask(session: nox.Session) -> None:
    """The dask backend: the conformance suite on chunks of two elements (known gaps: tests/dask/conftest.py),
    laziness, persist, debug mode and moves, and README's example on a LocalCluster (127.0.0.1, 2 workers).
    """
    session.install(CORE, NUMPY, f"{DASK}[distributed]", *PYTEST)
    session.run("pytest", "tests/dask", "--tensorplug-backend", "dask", "--tensorplug-strict", *session.posargs)


@nox.session
def demo(session: nox.Session) -> None:
    """README's first command: the digits demo on numpy and on torch (above 95 % held out), and its --plot PNG."""
    session.install(*CONSTRAINTS, "torch==2.13.0")
    session.install(*CONSTRAINTS, f"{CORE}[plot]", NUMPY, TORCH, *PYTEST)
    session.run("pytest", "tests/demo", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and format check over every distribution, the tests and the tools."""
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict over the core and the NumPy backend."""
    session.install(*CONSTRAINTS, "torch==2.13.0")
    session.install(
        *CONSTRAINTS,
        "mypy>=1.10",
        "pytest>=8",
        f"{CORE}[plot]",
        NUMPY,
        TORCH,
        GRADS_EXTRA,
        ARRAY_API,
        f"{DASK}[distributed]",
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
    )
