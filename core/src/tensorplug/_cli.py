"""The ``tensorplug`` command (also ``python -m tensorplug``): one subcommand per entry of ``COMMANDS``.

A subcommand is a :class:`Command`: its name, a one-line help, a function
that adds its arguments to its parser, and a function that runs it and
returns the exit status. Adding one is one more line in ``COMMANDS``.

    tensorplug check NAME [PYTEST_ARGS...]   the conformance suite on backend NAME
    tensorplug new-backend NAME [DIR]        a new backend distribution, ready to install and test
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tensorplug._bench import cli as _bench


@dataclass(frozen=True)
class Command:
    """One subcommand: ``arguments(parser)`` declares its arguments, ``run(args)`` returns the exit status."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# -- check ----------------------------------------------------------------------


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--strict", action="store_true", help="fail on kernels the backend does not register")
    parser.add_argument("backend", metavar="NAME", help="an installed backend (see tp.list_backends())")
    parser.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, metavar="PYTEST_ARGS", help="passed on to pytest (-k Add, -x, -q)"
    )


def check(args: argparse.Namespace) -> int:
    """Run ``pytest --tensorplug-backend NAME`` in a subprocess, on the suite alone; return pytest's exit status.

    pytest runs with an empty configuration in an empty temporary directory
    as its root, so neither the tests nor the pytest settings of the current
    project get involved; ``-p tensorplug`` loads the plugin even where
    plugin autoloading is disabled. Paths among ``PYTEST_ARGS`` (``--junitxml``)
    are relative to the current directory, as usual.
    """
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tensorplug-check-") as root:
        config = Path(root, "pytest.ini")
        config.write_text("[pytest]\n")
        command = [sys.executable, "-m", "pytest", "-p", "tensorplug", "-c", str(config), root]
        command += ["--tensorplug-backend", args.backend]
        if args.strict:
            command.append("--tensorplug-strict")
        return subprocess.call([*command, *args.pytest_args])


# -- new-backend ----------------------------------------------------------------


def _new_backend_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the backend's name: a lowercase identifier, such as my_gpu")
    parser.add_argument(
        "directory",
        metavar="DIR",
        nargs="?",
        type=Path,
        help="where to write it (default: ./tensorplug-NAME); it must not exist, or be empty",
    )


def new_backend(args: argparse.Namespace) -> int:
    """Write the skeleton distribution and say what to do next."""
    from tensorplug._scaffold import ScaffoldError
    from tensorplug._scaffold import new_backend as write_skeleton

    try:
        files = write_skeleton(args.name, args.directory)
    except ScaffoldError as exc:
        print(f"tensorplug new-backend: error: {exc}", file=sys.stderr)
        return 2
    root = files[0].parent
    print(f"Wrote backend {args.name!r} in {root}:")
    for path in files:
        print(f"  {path.relative_to(root)}")
    print(f"Next: pip install -e {root} pytest && cd {root} && pytest   (then see {root / 'README.md'})")
    return 0


COMMANDS: tuple[Command, ...] = (
    Command("check", "run the conformance suite on an installed backend (with pytest)", _check_arguments, check),
    Command("new-backend", "write a new backend distribution, ready to install and test", _new_backend_arguments,
            new_backend),
    Command("bench", "time each backend against raw NumPy / raw PyTorch, side by side", _bench.arguments, _bench.run),
)  # fmt: skip


def parser() -> argparse.ArgumentParser:
    """The argument parser: one subparser per entry of COMMANDS."""
    from tensorplug import __version__

    top = argparse.ArgumentParser(prog="tensorplug", description="tensorplug: tools for users and backend authors.")
    top.add_argument("--version", action="version", version=f"tensorplug {__version__}")
    subparsers = top.add_subparsers(title="commands", metavar="COMMAND")
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help, description=command.help)
        command.arguments(sub)
        sub.set_defaults(run=command.run)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` by default); return the exit status."""
    top = parser()
    args = top.parse_args(argv)
    if not hasattr(args, "run"):
        top.print_help(sys.stderr)
        return 2
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    return status
