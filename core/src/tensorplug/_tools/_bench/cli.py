"""``tensorplug bench``: its arguments, and the run function (which imports the benchmark machinery when called).

This module is imported when the ``tensorplug`` command builds its parser, so
it imports nothing beyond the standard library at the top.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``tensorplug bench``."""
    parser.add_argument(
        "--backend",
        action="append",
        metavar="NAME",
        dest="backends",
        help="benchmark this backend (repeatable; default: every installed backend that initialises)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny loop counts and few repeats: a smoke test")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    parser.add_argument("--output", type=Path, metavar="FILE.md", help="also write the results as markdown there")
    parser.add_argument(
        "--no-autograd", action="store_true", help="leave out HIPS autograd (timed for comparison when installed)"
    )
    parser.add_argument(
        "--no-jax", action="store_true", help="leave out JAX (jax.jit and eager, timed for comparison when installed)"
    )
    parser.set_defaults(command_line=None)


def run(args: argparse.Namespace) -> int:
    """Time every workload on the chosen backends beside its reference; print the table (or JSON).

    Returns 0, or 1 when a workload failed to run, or 2 when a backend asked
    for with ``--backend`` is not installed or does not initialise. A target
    missed is reported, not an error: timings depend on the machine.
    """
    import tensorplug as tp
    from tensorplug._tools._bench import blas, isolated, references, report, timing, workloads

    settings = timing.QUICK if args.quick else timing.FULL
    results = report.Results(settings, args.command_line or command_line(args), load_before=report.load_average())
    results.blas = blas.probe()
    results.blas_warning = results.blas.warning(blas.probe_without_overrides() if results.blas.overrides else None)
    if results.blas_warning is not None:
        print(f"tensorplug bench: warning: {results.blas_warning}", file=sys.stderr)
    unknown = [name for name in args.backends or [] if name not in tp.list_backends()]
    if unknown:
        installed = ", ".join(tp.list_backends()) or "none"
        print(
            f"tensorplug bench: error: no backend named {unknown[0]!r} is installed (installed: {installed})",
            file=sys.stderr,
        )
        return 2
    if args.backends:  # asked for by name: initialise them all first, so that one that cannot run stops nothing
        for name in dict.fromkeys(args.backends):
            try:
                tp.backend(name)
            except tp.BackendError as exc:
                print(f"tensorplug bench: error: {exc}", file=sys.stderr)
                return 2
    # Each backend's rows are timed in a process of their own, which also initialises it (see
    # tensorplug._tools._bench.isolated)
    for name in dict.fromkeys(args.backends or tp.list_backends()):
        outcome = isolated.run(name, settings, named=bool(args.backends))
        if outcome.skipped is not None:
            print(f"tensorplug bench: skipping backend {name!r}: {outcome.skipped}", file=sys.stderr)
            results.skipped[name] = outcome.skipped
        results.backends.extend(outcome.results)
    if not args.backends and not args.no_autograd and references.autograd_available():
        results.backends.extend(isolated.run(isolated.AUTOGRAD_GROUP, settings).results)  # for comparison
    if not args.backends and not args.no_jax and references.jax_available():
        results.backends.extend(isolated.run(isolated.JAX_GROUP, settings).results)  # beside the traced rows
    results.import_row = workloads.bench_import(settings)

    if args.json:
        print(json.dumps(report.json_report(results), indent=2))
    else:
        report.print_report(results)
    if args.output is not None:
        report.write_markdown(args.output, results)
        print(f"wrote {args.output}", file=sys.stderr)
    return 1 if results.failures else 0


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this run, as the results file records it."""
    words = ["tensorplug", "bench"]
    for name in args.backends or []:
        words += ["--backend", name]
    if args.quick:
        words.append("--quick")
    if args.no_autograd:
        words.append("--no-autograd")
    if args.no_jax:
        words.append("--no-jax")
    return " ".join(words)
