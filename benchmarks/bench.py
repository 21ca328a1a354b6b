"""Benchmarks: every installed backend against raw NumPy / raw PyTorch, side by side in one run.

A thin wrapper over ``tensorplug bench`` (the code lives in the installed
core, tensorplug._tools._bench) that writes benchmarks/RESULTS.md after a full run.
Run from the repository root::

    python benchmarks/bench.py            # full run (a few minutes), writes benchmarks/RESULTS.md
    python benchmarks/bench.py --quick    # a few seconds, for smoke tests; writes a file only with --output

It takes the options of ``tensorplug bench`` (``--backend NAME``, ``--json``,
``--output FILE.md``). A row's target is the largest ratio of tensorplug's
time to the reference's that it may have.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tensorplug._tools._bench import cli, report, workloads
from tensorplug._tools._bench.timing import FULL, QUICK, Settings
from tensorplug._tools._bench.workloads import Row

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "RESULTS.md"

__all__ = ["FULL", "QUICK", "bench_torch", "main", "print_table"]


def bench_torch(settings: Settings) -> list[Row]:
    """The workloads on the torch backend against raw PyTorch (benchmarks/gpu_check.py runs them on CUDA)."""
    return workloads.bench_backend("torch", settings).rows


def print_table(rows: list[Row]) -> None:
    print(report.text_table(rows))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python benchmarks/bench.py", description=__doc__.splitlines()[0])
    cli.arguments(parser)
    args = parser.parse_args(argv)
    args.command_line = " ".join(["python", "benchmarks/bench.py", *argv])
    if args.output is None and not args.quick:
        args.output = DEFAULT_OUTPUT
    return cli.run(args)


if __name__ == "__main__":
    sys.exit(main())
