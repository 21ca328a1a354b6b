"""The results: a table on a terminal, a markdown file (benchmarks/RESULTS.md), JSON rows."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pluggy

import tensorplug as tp
from tensorplug._inspection._profile import format_seconds as format_time
from tensorplug._plugins._env import ENV_ALLOW
from tensorplug._tools._bench.blas import BlasInfo
from tensorplug._tools._bench.isolated import timing_plugins
from tensorplug._tools._bench.timing import THREAD_VARIABLES, Settings, thread_setting
from tensorplug._tools._bench.workloads import (
    AUTOGRAD,
    CROSS_WORKLOADS,
    JAX_EAGER,
    JAX_JIT,
    JIT,
    RECORDS_PER_SCOPE,
    TOLERANCE,
    TRACED,
    BackendResult,
    Row,
)


@dataclass
class Results:
    """One run of the benchmark: every backend's rows, the import row, and the backends that could not run."""

    settings: Settings
    command: str
    backends: list[BackendResult] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # backend name -> why it was not measured
    import_row: Row | None = None
    load_before: str = ""
    blas: BlasInfo | None = None
    blas_warning: str | None = None

    @property
    def rows(self) -> list[Row]:
        """Each backend's rows, then the numpy backend's against raw PyTorch (see ``cross_rows``), then the import
        row."""
        rows = [row for result in self.backends for row in result.rows] + cross_rows(self.backends)
        return rows if self.import_row is None else [*rows, self.import_row]

    @property
    def failures(self) -> list[str]:
        return [failure for result in self.backends for failure in result.failures]


def cross_rows(backends: list[BackendResult]) -> list[Row]:
    """The numpy backend's eager rows of CROSS_WORKLOADS against raw PyTorch on the CPU: tensorplug's time from
    the numpy backend's process, raw PyTorch's from the torch backend's process of the same run (the two libraries'
    thread pools are never timed in one process); and its traced rows against ``jax.jit``'s time for the same
    workload, from JAX's process. None of a kind when either side was not measured."""
    numpy_rows = {row.workload: row for result in backends if result.backend == "numpy" for row in result.rows}
    torch_rows = {
        row.workload: row
        for result in backends
        if result.backend == "torch" and result.device == "cpu"
        for row in result.rows
    }
    rows = []
    for workload in CROSS_WORKLOADS:
        if workload in numpy_rows and workload in torch_rows:
            ours, theirs = numpy_rows[workload], torch_rows[workload]
            rows.append(Row("numpy", ours.device, workload, theirs.reference_name, theirs.reference, ours.tensorplug))
    jitted = {row.workload + TRACED: row for result in backends if result.backend == JAX_JIT for row in result.rows}
    for workload, theirs in jitted.items():  # JAX's compiled steps beside the numpy backend's traced ones
        if workload in numpy_rows:
            rows.append(Row("numpy", "cpu", workload, JIT, theirs.tensorplug, numpy_rows[workload].tensorplug))
    return rows


HEADER = ["backend", "workload", "reference", "reference time", "tensorplug time", "ratio", "target", "met"]


def judged(results: Results, row: Row) -> str | None:
    """The row's verdict ("met", "missed", "close"): None where it has no target, or the settings judge nothing."""
    return row.verdict if results.settings.judged else None


def table_cells(row: Row, verdict: str | None) -> list[str]:
    backend = "-" if row.backend is None else f"{row.backend} ({row.device})"
    return [
        backend,
        row.workload,
        row.reference_name,
        format_time(row.reference),
        format_time(row.tensorplug),
        f"{row.ratio:.2f}x",
        "-" if row.target is None else f"≤ {row.target:.2f}x",
        VERDICT_CELLS[verdict],
    ]


VERDICT_CELLS = {None: "-", "met": "yes", "missed": "NO", "close": "close"}


def text_table(rows: list[Row], judge: bool = True) -> str:
    """The rows as aligned columns, for a terminal (with an empty "met" column unless ``judge``)."""
    cells = [HEADER] + [table_cells(row, row.verdict if judge else None) for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADER))]
    lines = []
    for n, line in enumerate(cells):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


def markdown_table(results: Results) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(table_cells(row, judged(results, row))) + " |" for row in results.rows]
    return "\n".join(lines)


def row_label(row: Row) -> str:
    return row.workload if row.backend is None else f"{row.backend} ({row.device}), {row.workload}"


def verdict(results: Results) -> list[str]:
    """How many targets were met, missed or too close to call, each row not met with its target, and how many
    workloads failed to run.

    A target is the largest ratio of tensorplug's time to the reference's
    that a row may have; a ratio within TOLERANCE of it either way is too
    close to call. With settings that judge nothing (--quick), the verdict
    says so instead.
    """
    failed = f"{len(results.failures)} workload(s) failed to run." if results.failures else ""
    targets = [(row, row.target) for row in results.rows if row.target is not None]
    if not results.settings.judged:
        line = (
            f"No verdict: --quick times each workload for milliseconds, too briefly to tell whether the "
            f"{len(targets)} rows with a target meet it (run `tensorplug bench` without --quick for a verdict)."
        )
        return [f"{line} {failed}".rstrip()]
    by_verdict: dict[str, list[tuple[Row, float]]] = {"met": [], "missed": [], "close": []}
    for row, target in targets:
        by_verdict[str(row.verdict)].append((row, target))
    met, missed, close = by_verdict["met"], by_verdict["missed"], by_verdict["close"]
    lines = [
        f"Verdict: {len(met)} of {len(targets)} targets met, {len(missed)} missed, {len(close)} too close to call "
        f"(within {TOLERANCE:.0%} of the target either way, which a busy machine can swing from run to run)."
    ]
    for label, rows in (("Missed", missed), ("Too close to call", close)):
        if rows:
            lines.append(f"{label}:")
        for row, target in rows:
            lines.append(f"- {row_label(row)}: {row.ratio:.2f}x (target: ≤ {target:.2f}x {row.reference_name})")
    if failed:
        lines.append(failed)
    return lines


def references_text(results: Results) -> list[str]:
    """What each backend was measured against, one line each."""
    lines = []
    for result in results.backends:
        if result.backend == AUTOGRAD:
            lines.append(
                f"- {AUTOGRAD} (installed, so timed for comparison; not a tensorplug backend): its rows hold "
                "autograd's own time in the tensorplug column, against NumPy by hand"
            )
            continue
        if result.backend in (JAX_JIT, JAX_EAGER):
            lines.append(
                f"- {result.backend} (installed, so timed for comparison; not a tensorplug backend): its rows hold "
                "JAX's own time on the CPU in the tensorplug column, against NumPy by hand (with one thread per "
                "library, JAX's process is kept on one CPU: XLA has no setting for one thread); compare them with "
                "the numpy backend's tp.function rows"
            )
            continue
        if result.reference == "raw NumPy" and result.backend != "numpy":
            how = "raw NumPy (the reference for every backend other than torch)"
        elif result.reference == "raw PyTorch eager":
            how = f"raw PyTorch eager on the same device ({result.device})"
        else:
            how = result.reference
        lines.append(f"- backend {result.backend} ({result.device}): against {how}")
    crossed = {row.reference_name for row in cross_rows(results.backends)}
    if crossed - {JIT}:
        lines.append(
            "- backend numpy (cpu), also against raw PyTorch eager on the CPU: the rows naming a torch reference hold "
            "the numpy backend's time beside raw PyTorch's from the torch backend's process of the same run (each "
            "backend is timed in a process of its own: torch's and NumPy's thread pools in one process slow each "
            "other)"
        )
    if JIT in crossed:
        lines.append(
            "- backend numpy (cpu), also against jax.jit: the traced rows naming jax.jit hold the numpy backend's "
            "time beside JAX's compiled step from JAX's process of the same run"
        )
    for name, why in results.skipped.items():
        lines.append(f"- backend {name}: not measured: {why}")
    return lines


def blas_lines(results: Results) -> list[str]:
    """Which BLAS NumPy ran, and the warning when an environment override forced older kernels."""
    if results.blas is None:
        return []
    lines = [f"NumPy's BLAS: {results.blas.text(threads=False)} (threads: {threads_text()})"]
    if results.blas_warning is not None:
        lines.append(f"WARNING: {results.blas_warning}")
    return lines


def print_report(results: Results) -> None:
    """The BLAS NumPy ran, the table, what each backend was measured against, failures and the verdict, on stdout."""
    for line in blas_lines(results):
        print(line)
    print(text_table(results.rows, results.settings.judged))
    print()
    for line in references_text(results):
        print(line)
    for failure in results.failures:
        print(f"FAILED: {failure}")
    for line in verdict(results):
        print(line)


def json_report(results: Results) -> dict[str, Any]:
    """The results as plain data (times in seconds; ``met`` is null where there is no target, and on every row
    when the settings judge nothing)."""
    rows = [
        {
            "backend": row.backend,
            "device": row.device,
            "workload": row.workload,
            "reference": row.reference_name,
            "reference_seconds": row.reference,
            "tensorplug_seconds": row.tensorplug,
            "ratio": row.ratio,
            "target": row.target,
            "met": row.met if results.settings.judged else None,
            "verdict": judged(results, row),
        }
        for row in results.rows
    ]
    backends = [
        {"backend": r.backend, "device": r.device, "reference": r.reference, "failures": r.failures}
        for r in results.backends
    ]
    return {
        "tensorplug": tp.__version__,
        "settings": {
            "seconds_per_repeat": results.settings.seconds_per_repeat,
            "repeats": results.settings.repeats,
            "import_runs": results.settings.import_runs,
            "rounds": results.settings.rounds,
            "judged": results.settings.judged,
            "threads": thread_setting(),
        },
        "backends": backends,
        "skipped": results.skipped,
        "blas": None
        if results.blas is None
        else {
            "library": results.blas.library,
            "kernel": results.blas.kernel,
            "overrides": results.blas.overrides,
            "warning": results.blas_warning,
        },
        "rows": rows,
    }


# -- the markdown file -----------------------------------------------------------------------------------------------


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, where the system tells them."""
    if not hasattr(os, "getloadavg"):
        return "unknown"
    return ", ".join(f"{load:.2f}" for load in os.getloadavg())


def source_revision() -> str:
    """The git commit measured, and whether its Python files had uncommitted changes (in a source checkout)."""
    package = Path(tp.__file__).resolve().parent

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=package, capture_output=True, text=True, check=True).stdout.strip()

    try:
        git("ls-files", "--error-unmatch", "__init__.py")  # tensorplug itself is tracked, not just inside a repo
        commit = git("rev-parse", "--short", "HEAD")
        changes = git("status", "--porcelain", "--untracked-files=no", "--", ":(top)*.py")  # code, not results
    except (OSError, subprocess.CalledProcessError):
        return "an installed package (not a git checkout)"
    return f"{commit} (with uncommitted changes to Python files)" if changes else commit


def threads_text() -> str:
    setting = thread_setting()
    chosen = ", ".join(f"{name}={value}" for name, value in setting.items())
    if setting == dict.fromkeys(THREAD_VARIABLES, "1"):
        return f"{chosen} (tensorplug bench's default; set OMP_NUM_THREADS to choose)"
    return f"{chosen} (set by the user)"


def plugins_text() -> str:
    loaded = [info.distribution for info in tp.plugins() if info.status == "loaded" and info.name != "tensorplug"]
    return ", ".join(loaded) or "none"


def timing_plugins_text() -> str:
    plugins = timing_plugins()
    if plugins is None:
        return f"those {ENV_ALLOW} names (set by the user)"
    return (
        f"{', '.join(plugins) or 'none'} (the backends' plugins only: the rows compare the core's own gradients "
        "with the same math by hand, and a plugin that replaces gradients computes more)"
    )


def machine_description(results: Results) -> list[str]:
    return [
        f"- platform: {platform.platform()} ({platform.machine()})",
        f"- processor: {platform.processor() or 'unknown'}; CPU count: {os.cpu_count()}",
        f"- python: {platform.python_implementation()} {platform.python_version()}",
        f"- numpy: {np.__version__} (BLAS: {results.blas.text(threads=False) if results.blas else 'unknown'}); "
        f"pluggy: {pluggy.__version__}; tensorplug: {tp.__version__}",
        f"- installed backends: {', '.join(tp.list_backends())}",
        f"- plugins loaded by `import tensorplug` (the import row): {plugins_text()}",
        f"- plugins loaded in the timing processes: {timing_plugins_text()}",
        f"- source: {source_revision()}",
        f"- load average (1, 5, 15 min) before the run: {results.load_before}; after: {load_average()}",
        f"- threads of the timing processes: {threads_text()}",
    ]


def markdown_report(results: Results) -> str:
    settings = results.settings
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    failures = [f"- FAILED: {failure}" for failure in results.failures]
    return "\n".join(
        [
            "# Benchmark results",
            "",
            f"Measured {now} with:",
            "",
            "```",
            results.command,
            "```",
            "",
            *[f"{line}  " for line in blas_lines(results)],
            "",
            markdown_table(results),
            "",
            *verdict(results),
            "",
            *references_text(results),
            *failures,
            "",
            f"Times per call: {settings.rounds} round(s) of {settings.repeats} repeats of about "
            f"{settings.seconds_per_repeat * 1000:g} ms each, reference and tensorplug repeats interleaved, garbage "
            "collector enabled; each side's time is the smallest of its per-round medians (other programs on the "
            "machine only add time). The import row is whole-process time, the smallest per-round median of "
            f"{settings.import_runs} runs. Ratio = tensorplug / reference; a target is the largest ratio a row may "
            "have (the rows ending in 'tp.function' replay a traced program, the others run op by op); a ratio "
            f'within {TOLERANCE:.0%} of its target either way is too close to call ("close"). Each backend\'s rows '
            "are timed in a process of their own (and so are HIPS autograd's and JAX's): torch's OpenMP threads and "
            "NumPy's OpenBLAS threads slow each other down in one process. The numpy backend's rows against a torch "
            "reference take that reference's time from the torch backend's process of the same run.",
            "",
            "Workloads: the dispatch rows call the kernel directly on 1-element float32 tensors; the recording row "
            f"records {RECORDS_PER_SCOPE} calls per gradient scope (opening and closing the scope included; raw "
            "PyTorch records its autograd graph for an input that requires grad, raw NumPy records nothing); the "
            "gradient row compares `tp.grad` with the same forward and backward written in NumPy (with "
            "`torch.autograd.grad` for the torch backend); the MLP rows run one full SGD step (forward, softmax "
            "cross-entropy, backward, update; relu hidden layers; float32) with `tp.variable_grads` and "
            "`Variable.assign` against the same step written in NumPy (in raw PyTorch eager for the torch backend), "
            "each repeat starting from the same initial weights (the two are checked to give the same loss and "
            "updated weights first); the rows ending in 'optimizer minimize' take the same step with "
            "`tp.train.SGD(rate).minimize(loss, variables)`. The rows ending in 'tp.function' time the same "
            "gradient and steps wrapped in `tp.function`: traced once before timing, then every timed call "
            "replays the traced kernel program. "
            "The CNN rows take one Adam step (`tp.train.Adam(...).minimize`) of a small convolutional network on "
            "32 handwritten digits (8x8): conv 3x3 16 filters, max pool 2x2, conv 3x3 32 filters, max pool 2x2, "
            "dense 10, against the same step written in NumPy (im2col) and in raw PyTorch eager (`torch.optim.Adam`, "
            "NCHW), from the same initial weights (checked to give the same loss and updated weights first). "
            "On CUDA (any asynchronous device), each timed call waits for the device, in the reference and in "
            "tensorplug alike.",
            "",
            "## Machine",
            "",
            *machine_description(results),
            "",
        ]
    )


def write_markdown(path: Path, results: Results) -> None:
    path.write_text(markdown_report(results), encoding="utf-8")
