"""The ``tensorplug`` command (also ``python -m tensorplug``): one subcommand per entry of ``COMMANDS``.

A subcommand is a :class:`Command`: its name, a one-line help, a function
that adds its arguments to its parser, and a function that runs it and
returns the exit status. Adding one is one more line in ``COMMANDS``.

    tensorplug info [--json] [--init]                   plugins, backends and kernel coverage
    tensorplug demo [--backend NAME] [--plot FILE.png]  train an MLP on the handwritten digits
    tensorplug bench [--backend NAME] [--quick]         each backend against raw NumPy / raw PyTorch
    tensorplug check NAME [PYTEST_ARGS...]              the conformance suite on backend NAME
    tensorplug new-backend NAME [DIR]                   a new backend distribution, ready to install and test
    tensorplug kernels [--markdown] [NAME...]           the kernel reference: inputs, attrs, outputs, conventions
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tensorplug._runtime._install import pip_install
from tensorplug._tools._bench import cli as _bench


@dataclass(frozen=True)
class Command:
    """One subcommand: ``arguments(parser)`` declares its arguments, ``run(args)`` returns the exit status."""

    name: str
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# -- info -----------------------------------------------------------------------


def _info_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument(
        "--init", action="store_true", help="initialise every backend (imports their libraries, e.g. torch) first"
    )
    parser.add_argument("--brief", action="store_true", help="leave out the kernel matrix (its summary stays)")


def info(args: argparse.Namespace) -> int:
    """Print what is installed and how it is wired; exit status 1 when a plugin or an initialised backend failed.

    ``args.strict_error`` is the error ``import tensorplug`` raised in strict
    mode, when ``_tensorplug_cli`` had to load the plugins again without it.
    """
    import json

    from tensorplug._tools._info import collect, render

    data = collect(initialise=args.init, strict_error=getattr(args, "strict_error", None))
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(render(data, kernels=not args.brief))
    failed = any(p["status"] == "failed" for p in data["plugins"]) or any(b["error"] for b in data["backends"])
    return 1 if failed or data["strict_error"] else 0


# -- demo -----------------------------------------------------------------------


def _demo_arguments(parser: argparse.ArgumentParser) -> None:
    from tensorplug._tools._demo import loss_text
    from tensorplug._tools._demo_model import Settings

    defaults = Settings()
    parser.description = (
        "Train a 64-hidden-10 MLP on the UCI handwritten digits with Adam on the "
        f"{loss_text(defaults.label_smoothing)}, and report its accuracy on the 20 % of digits it never trained on."
    )
    resumed = "; with --resume, the checkpoint's, and a different value is refused"
    parser.add_argument("--backend", metavar="NAME", help="the backend to train on (default: the default backend)")
    parser.add_argument(
        "--epochs",
        type=_positive_int,
        default=defaults.epochs,
        help="passes over the training set (default: %(default)s)",
    )
    for flag, kind, doc in (
        ("--batch-size", _positive_int, "examples per step"),
        ("--hidden", _positive_int, "hidden units"),
        ("--learning-rate", float, "Adam's step size"),
        ("--seed", int, "seed of the split, the weights and shuffling"),
    ):
        default = getattr(defaults, flag[2:].replace("-", "_"))
        parser.add_argument(flag, type=kind, default=None, help=f"{doc} (default: {default}{resumed})")
    parser.add_argument(
        "--eager", action="store_true", help="run each step op by op instead of replaying it traced with tp.function"
    )
    parser.add_argument(
        "--plot", metavar="FILE.png", type=Path, help="save the loss and accuracy curves (needs matplotlib)"
    )
    parser.add_argument(
        "--save", metavar="PATH", type=Path, help="save the model and its optimizer there after each epoch (tp.save)"
    )
    parser.add_argument(
        "--resume",
        metavar="PATH",
        type=Path,
        help="go on from a checkpoint written by --save, for --epochs more epochs (its model size, seed, batch size "
        "and learning rate)",
    )
    parser.add_argument(
        "--export",
        metavar="FILE.onnx",
        type=Path,
        help="save the trained classifier as an ONNX model (needs the ONNX exporter: "
        f"{pip_install('tensorplug-onnx')} from a tensorplug checkout)",
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def demo(args: argparse.Namespace) -> int:
    """Train the digits MLP (see tensorplug._tools._demo)."""
    from tensorplug._tools._demo import run

    return run(args)


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
    are relative to the current directory, as usual. Without pytest it says
    how to install it (the ``test`` extra) and returns 2.
    """
    import importlib.util
    import subprocess
    import tempfile

    if importlib.util.find_spec("pytest") is None:
        print(
            f"tensorplug check: error: the conformance suite runs with pytest, which this Python ({sys.executable}) "
            f"cannot import. Install it with: {pip_install('tensorplug', 'test')}",
            file=sys.stderr,
        )
        return 2
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
    from tensorplug._tools._scaffold import ScaffoldError
    from tensorplug._tools._scaffold import new_backend as write_skeleton

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


# -- kernels --------------------------------------------------------------------


def _kernels_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--markdown", action="store_true", help="print the whole reference page (docs/kernels.md)")
    parser.add_argument("--ops", action="store_true", help="print the index of the public ops (docs/ops.md)")
    parser.add_argument("names", metavar="NAME", nargs="*", help="kernel names (e.g. Conv2D); default: a list of all")


def kernels(args: argparse.Namespace) -> int:
    """Print the kernel reference: the whole page, the entries named, or one line per kernel."""
    from tensorplug.kernel_reference import REFERENCE, entry_text, markdown, ops_markdown

    if args.ops and not args.names:
        sys.stdout.write(ops_markdown())
        return 0
    if args.markdown and not args.names:
        sys.stdout.write(markdown())
        return 0
    if args.names:
        try:
            sys.stdout.write("\n".join(entry_text(name) for name in args.names))
        except KeyError as exc:
            print(f"tensorplug kernels: error: {exc.args[0]}", file=sys.stderr)
            return 2
        return 0
    for entry in REFERENCE.values():
        inputs = ", ".join(f"{i.name}[]" if i.is_list else i.name for i in entry.inputs) or "-"
        attrs = ", ".join(a.name for a in entry.attrs) or "-"
        print(f"{entry.name:<22} {entry.family:<9} inputs: {inputs:<22} attrs: {attrs}")
    print("tensorplug kernels NAME prints an entry; --markdown the whole reference (docs/kernels.md)")
    return 0


COMMANDS: tuple[Command, ...] = (
    Command("info", "show the installed plugins, the backends and the kernel coverage", _info_arguments, info),
    Command("demo", "train an MLP on handwritten digits and report its held-out accuracy", _demo_arguments, demo),
    Command("bench", "time each backend against raw NumPy / raw PyTorch, side by side", _bench.arguments, _bench.run),
    Command("check", "run the conformance suite on an installed backend (with pytest)", _check_arguments, check),
    Command("new-backend", "write a new backend distribution, ready to install and test", _new_backend_arguments,
            new_backend),
    Command("kernels", "the kernel reference: each kernel's inputs, attrs, outputs, dtypes and conventions",
            _kernels_arguments, kernels),
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


def main(argv: Sequence[str] | None = None, strict_error: str | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` by default); return the exit status.

    The ``tensorplug`` command starts in ``_tensorplug_cli``, which passes
    ``strict_error`` when strict mode made ``import tensorplug`` fail.
    """
    top = parser()
    args = top.parse_args(argv)
    args.strict_error = strict_error
    if not hasattr(args, "run"):
        top.print_help(sys.stderr)
        return 2
    try:
        status: int = args.run(args)
    except KeyboardInterrupt:
        return 130
    return status
