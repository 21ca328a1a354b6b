"""Benchmarks: tensorplug (NumPy backend) against NumPy written by hand, side by side in one run.

Each workload is timed twice in the same process, once for a reference (raw
NumPy) and once for tensorplug, with the repeats of the two interleaved so
that drift in the machine's speed affects both alike. A repeat runs the
workload many times in a loop (as ``timeit`` does) and the table reports the
median time per call over the repeats. The garbage collector stays enabled,
as it is in real programs.

Run from the repository root::

    python benchmarks/bench.py            # full run, writes benchmarks/RESULTS.md
    python benchmarks/bench.py --quick    # a few seconds, for smoke tests; writes a file only with --output

The targets are those of issue 8 (ratios of tensorplug to the reference).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import functools
import gc
import itertools
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pluggy

import tensorplug as tp
from tensorplug._autodiff import _Scope

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "RESULTS.md"
RECORDS_PER_SCOPE = 1000  # kernel calls recorded per gradient scope in the recording workload


# -- timing machinery ------------------------------------------------------------------------------------------------


@dataclass
class Settings:
    """How long to time: seconds per repeat (the loop count is calibrated to it) and repeats per workload."""

    seconds_per_repeat: float
    repeats: int
    import_runs: int


FULL = Settings(seconds_per_repeat=0.2, repeats=15, import_runs=7)
QUICK = Settings(seconds_per_repeat=0.002, repeats=3, import_runs=3)


@dataclass
class Row:
    """One line of the results table; times are seconds per call."""

    workload: str
    reference_name: str
    reference: float
    tensorplug: float
    target: float | None  # None: shown for information, no target

    @property
    def ratio(self) -> float:
        return self.tensorplug / self.reference

    @property
    def verdict(self) -> str:
        if self.target is None:
            return "-"
        return "yes" if self.ratio <= self.target else "NO"


class Workload:
    """A statement timed in a ``timeit`` loop, with an optional context opened afresh around each repeat.

    The statement is a string compiled by ``timeit`` so that no extra Python
    call per iteration inflates sub-microsecond timings. ``calls`` says how
    many calls of the measured operation one execution of the statement makes.
    """

    def __init__(
        self,
        stmt: str,
        namespace: dict[str, object],
        around: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
        calls: int = 1,
    ) -> None:
        self.timer = timeit.Timer(stmt, setup="gc.enable()", globals={"gc": gc, **namespace})
        self.around = around
        self.calls = calls
        self.number = 1

    def run(self, number: int) -> float:
        """Seconds per call, for one repeat of ``number`` executions of the statement."""
        with self.around():
            return self.timer.timeit(number) / (number * self.calls)

    def calibrate(self, seconds: float) -> None:
        """Pick the loop count so that one repeat lasts about ``seconds`` (at least one execution)."""
        self.run(1)  # warm up caches (kernel tables, BLAS buffers)
        number = 1
        while True:
            elapsed = self.run(number) * number * self.calls
            if elapsed >= seconds or number >= 10_000_000:
                break
            number = max(number * 2, int(number * seconds / max(elapsed, 1e-9) * 1.1))
        self.number = number


def compare(reference: Workload, candidate: Workload, settings: Settings) -> tuple[float, float]:
    """Median seconds per call of each workload, repeats interleaved."""
    reference.calibrate(settings.seconds_per_repeat)
    candidate.calibrate(settings.seconds_per_repeat)
    ref_times, cand_times = [], []
    for _ in range(settings.repeats):
        ref_times.append(reference.run(reference.number))
        cand_times.append(candidate.run(candidate.number))
    return statistics.median(ref_times), statistics.median(cand_times)


def one_element(value: float) -> np.ndarray:
    return np.array([value], dtype=np.float32)


# -- dispatch workloads ----------------------------------------------------------------------------------------------


def bench_dispatch(settings: Settings) -> list[Row]:
    """A 1-element add: raw numpy, run_kernel without and with a recording tape, and the + operator."""
    a_np, b_np = one_element(1.5), one_element(2.5)
    a, b = tp.tensor(a_np), tp.tensor(b_np)
    numpy_add = Workload("add(a, b)", {"add": np.add, "a": a_np, "b": b_np})
    kernel_namespace = {"run_kernel": tp.run_kernel, "inputs": {"a": a, "b": b}}
    run_kernel = Workload('run_kernel("Add", inputs)', kernel_namespace)
    # While recording, every kernel touching the watched tensor a is recorded and the records stay in
    # memory until the scope closes; so each scope records a bounded block of calls, as a forward pass
    # of a model would, and the cost of opening and closing it is shared among them.
    recording_stmt = """
with Scope(watched):
    for _ in block:
        run_kernel("Add", inputs)
"""
    block = range(RECORDS_PER_SCOPE)
    recording_namespace = {**kernel_namespace, "Scope": _Scope, "watched": [a], "block": block}
    recording = Workload(recording_stmt, recording_namespace, calls=len(block))
    operator_add = Workload("a + b", {"a": a, "b": b})

    rows = []
    ref, cand = compare(numpy_add, run_kernel, settings)
    rows.append(Row("run_kernel Add, 1 element, no tape", "np.add", ref, cand, 3.0))
    ref, cand = compare(numpy_add, recording, settings)
    rows.append(Row("run_kernel Add, 1 element, recording", "np.add", ref, cand, 5.0))
    ref, cand = compare(numpy_add, operator_add, settings)
    rows.append(Row("a + b operator, 1 element, no tape", "np.add", ref, cand, None))
    return rows


def check_recording_records() -> None:
    """Make sure the recording workload really records (so it does not silently time the no-tape path)."""
    a, b = tp.tensor(one_element(1.0)), tp.tensor(one_element(2.0))
    with _Scope([a]) as scope:
        tp.run_kernel("Add", {"a": a, "b": b})
    assert len(scope.tape.records) == 1, "the recording scope did not record the Add kernel"


# -- small gradient --------------------------------------------------------------------------------------------------


def numpy_small_grad(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward of sum(tanh(x * w + b)) by hand: (value, d/dx)."""
    t = np.tanh(x * w + b)
    value = t.sum()
    return value, (1.0 - t * t) * w


def bench_small_grad(settings: Settings) -> Row:
    x_np, w_np, b_np = one_element(0.3), one_element(-1.2), one_element(0.4)
    x, w, b = tp.tensor(x_np), tp.tensor(w_np), tp.tensor(b_np)
    df = tp.grad(lambda x: tp.sum(tp.tanh(x * w + b)))

    expected = numpy_small_grad(x_np, w_np, b_np)[1]
    np.testing.assert_allclose(df(x).numpy(), expected, rtol=1e-6)

    namespace = {"numpy_small_grad": numpy_small_grad, "x": x_np, "w": w_np, "b": b_np}
    reference = Workload("numpy_small_grad(x, w, b)", namespace)
    candidate = Workload("df(x)", {"df": df, "x": x})
    ref, cand = compare(reference, candidate, settings)
    return Row("grad of sum(tanh(x*w+b)), 1 element", "NumPy by hand", ref, cand, 5.0)


# -- MLP training step -----------------------------------------------------------------------------------------------


@dataclass
class MLPProblem:
    """One batch of data and the initial weights, shared by both implementations."""

    x: np.ndarray
    onehot: np.ndarray
    weights: list[np.ndarray]  # W1, b1, W2, b2, ...
    learning_rate: float = 0.01


def make_problem(sizes: list[int], batch: int, seed: int = 0) -> MLPProblem:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    onehot = np.eye(sizes[-1], dtype=np.float32)[labels]
    weights = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        weights.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(np.float32))
        weights.append(np.zeros(fan_out, dtype=np.float32))
    return MLPProblem(x, onehot, weights)


class NumpyMLP:
    """The SGD step written by hand in NumPy: relu hidden layers, softmax cross-entropy averaged over the batch."""

    def __init__(self, problem: MLPProblem) -> None:
        self.problem = problem
        self.x = problem.x
        self.onehot = problem.onehot
        self.learning_rate = np.float32(problem.learning_rate)
        self.reset()

    def reset(self) -> None:
        """Back to the initial weights."""
        self.params = [p.copy() for p in self.problem.weights]

    def step(self) -> float:
        params = self.params
        layers = len(params) // 2
        # forward, keeping every layer's input and pre-activation for the backward pass
        inputs, pre_activations = [], []
        h = self.x
        for i in range(layers):
            inputs.append(h)
            z = h @ params[2 * i] + params[2 * i + 1]
            pre_activations.append(z)
            h = np.maximum(z, 0) if i < layers - 1 else z
        logits = h
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        batch = logits.shape[0]
        loss = -(log_probs * self.onehot).sum() / batch
        # backward
        dz = (np.exp(log_probs) - self.onehot) / np.float32(batch)
        grads = [None] * len(params)
        for i in reversed(range(layers)):
            grads[2 * i] = inputs[i].T @ dz
            grads[2 * i + 1] = dz.sum(axis=0)
            if i > 0:
                dz = (dz @ params[2 * i].T) * (pre_activations[i - 1] > 0)
        # SGD update, in place
        for p, g in zip(params, grads, strict=True):
            p -= self.learning_rate * g
        return float(loss)


class TensorplugMLP:
    """The same step with tensorplug: tp.variable_grads for the gradients, Variable.assign for the update."""

    def __init__(self, problem: MLPProblem, prefix: str) -> None:
        self.problem = problem
        self.x = tp.tensor(problem.x)
        self.onehot = tp.tensor(problem.onehot)
        names = [f"{prefix}/{kind}{i // 2 + 1}" for i, kind in enumerate(["W", "b"] * (len(problem.weights) // 2))]
        self.params = [tp.variable(p.copy(), name=name) for p, name in zip(problem.weights, names, strict=True)]
        self.learning_rate = problem.learning_rate

    def reset(self) -> None:
        """Back to the initial weights."""
        for variable, initial in zip(self.params, self.problem.weights, strict=True):
            variable.assign(initial.copy())

    def loss(self) -> tp.Tensor:
        layers = len(self.params) // 2
        h = self.x
        for i in range(layers):
            h = tp.matmul(h, self.params[2 * i]) + self.params[2 * i + 1]
            if i < layers - 1:
                h = tp.relu(h)
        return tp.losses.softmax_cross_entropy(self.onehot, h)

    def step(self) -> tp.Tensor:
        value, grads = tp.variable_grads(self.loss, self.params)
        for p in self.params:
            p.assign(p - self.learning_rate * grads[p.name])
        return value


def check_same_step(problem: MLPProblem, prefix: str) -> None:
    """Both implementations must compute the same loss and the same updated weights from the same start."""
    by_hand = NumpyMLP(problem)
    with_tp = TensorplugMLP(problem, prefix + "/check")
    loss_by_hand = by_hand.step()
    loss_tp = with_tp.step().item()
    assert np.isclose(loss_by_hand, loss_tp, rtol=1e-5), f"losses differ: NumPy {loss_by_hand}, tensorplug {loss_tp}"
    for p_np, p_tp in zip(by_hand.params, with_tp.params, strict=True):
        np.testing.assert_allclose(p_tp.numpy(), p_np, rtol=1e-4, atol=1e-6)


@contextlib.contextmanager
def restarted(model: NumpyMLP | TensorplugMLP | RawTorchMLP) -> Iterator[None]:
    model.reset()
    yield


def bench_mlp(sizes: list[int], batch: int, target: float, settings: Settings) -> Row:
    problem = make_problem(sizes, batch)
    prefix = "-".join(map(str, sizes))
    check_same_step(problem, prefix)
    by_hand, with_tp = NumpyMLP(problem), TensorplugMLP(problem, prefix)
    # Each repeat restarts from the initial weights, so that every repeat times the same steps.
    reference = Workload("model.step()", {"model": by_hand}, around=lambda: restarted(by_hand))
    candidate = Workload("model.step()", {"model": with_tp}, around=lambda: restarted(with_tp))
    ref, cand = compare(reference, candidate, settings)
    return Row(f"MLP {prefix} batch {batch}, SGD step", "NumPy by hand", ref, cand, target)


# -- the torch backend against raw PyTorch -----------------------------------------------------------------------


def torch_backend_available() -> bool:
    return "torch" in tp.list_backends()


class RawTorchMLP:
    """The same SGD step in plain PyTorch eager mode: autograd for the gradients, an in-place update."""

    def __init__(self, problem: MLPProblem, device: str) -> None:
        import torch

        self.torch = torch
        self.problem = problem
        self.device = device
        self.x = torch.from_numpy(problem.x).to(device)
        self.labels = torch.from_numpy(problem.onehot.argmax(axis=1)).to(device)
        self.reset()

    def reset(self) -> None:
        self.params = [
            self.torch.from_numpy(p.copy()).to(self.device).requires_grad_(True) for p in self.problem.weights
        ]

    def step(self) -> float:
        torch, params = self.torch, self.params
        layers = len(params) // 2
        h = self.x
        for i in range(layers):
            h = h @ params[2 * i] + params[2 * i + 1]
            if i < layers - 1:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, self.labels)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= self.problem.learning_rate * p.grad
                p.grad = None
        return loss


def synchronizer(device: str) -> Callable[[], None]:
    """What makes a timed statement wait for the device (CUDA runs asynchronously)."""
    import torch

    return torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)


def bench_torch(settings: Settings) -> list[Row]:
    """Dispatch and MLP steps on the torch backend against raw PyTorch, on the backend's device."""
    import torch

    tp.set_backend("torch")
    device = tp.backend().device
    sync = synchronizer(device)
    try:
        a, b = tp.tensor(one_element(1.0)), tp.tensor(one_element(2.0))
        ta, tb = a.raw, b.raw
        reference = Workload("add(ta, tb); sync()", {"add": torch.add, "ta": ta, "tb": tb, "sync": sync})
        candidate = Workload(
            'run_kernel("Add", {"a": a, "b": b}); sync()', {"run_kernel": tp.run_kernel, "a": a, "b": b, "sync": sync}
        )
        ref, cand = compare(reference, candidate, settings)
        rows = [Row(f"torch ({device}): run_kernel Add, 1 element", "torch.add", ref, cand, None)]
        for sizes, batch, target in (([64, 32, 10], 32, None), ([784, 256, 256, 10], 128, 1.10)):
            problem = make_problem(sizes, batch)
            prefix = "torch-" + "-".join(map(str, sizes))
            raw, with_tp = RawTorchMLP(problem, device), TensorplugMLP(problem, prefix)
            np.testing.assert_allclose(float(raw.step()), with_tp.step().item(), rtol=1e-4)
            reference = Workload(
                "model.step(); sync()", {"model": raw, "sync": sync}, around=functools.partial(restarted, raw)
            )
            candidate = Workload(
                "model.step(); sync()", {"model": with_tp, "sync": sync}, around=functools.partial(restarted, with_tp)
            )
            ref, cand = compare(reference, candidate, settings)
            label = f"torch ({device}): MLP {'-'.join(map(str, sizes))} batch {batch}, SGD step"
            rows.append(Row(label, "raw PyTorch eager", ref, cand, target))
        return rows
    finally:
        tp.set_backend("numpy")


# -- import time -----------------------------------------------------------------------------------------------------


def time_process(code: str, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def bench_import(settings: Settings) -> Row:
    """Whole-process time of importing tensorplug against importing its two dependencies alone.

    Bytecode caching is allowed (PYTHONDONTWRITEBYTECODE is dropped) and one
    warm-up import of each runs first, as an installed package is used: with
    no .pyc files, compiling the sources would dominate the figure.
    """
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for code in ("import numpy, pluggy", "import tensorplug, tensorplug_numpy._unary"):
        time_process(code, env)
    reference, candidate = [], []
    for _ in range(settings.import_runs):
        reference.append(time_process("import numpy, pluggy", env))
        candidate.append(time_process("import tensorplug", env))
    return Row(
        "python -c 'import tensorplug' (whole process)",
        "import numpy, pluggy",
        statistics.median(reference),
        statistics.median(candidate),
        1.25,
    )


# -- report ----------------------------------------------------------------------------------------------------------


def format_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3g} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


HEADER = ["workload", "reference", "reference median", "tensorplug median", "ratio", "target", "met"]


def table_cells(row: Row) -> list[str]:
    return [
        row.workload,
        row.reference_name,
        format_time(row.reference),
        format_time(row.tensorplug),
        f"{row.ratio:.2f}x",
        "-" if row.target is None else f"≤ {row.target:.2f}x",
        row.verdict,
    ]


def print_table(rows: list[Row]) -> None:
    cells = [HEADER] + [table_cells(row) for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(HEADER))]
    for n, line in enumerate(cells):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
        if n == 0:
            print("  ".join("-" * width for width in widths))


def markdown_table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(table_cells(row)) + " |" for row in rows]
    return "\n".join(lines)


def blas_description() -> str:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # the layout of numpy's build information is not a stable API
        return "unknown"
    return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()


def machine_description(load_before: str, load_after: str) -> list[str]:
    return [
        f"- platform: {platform.platform()} ({platform.machine()})",
        f"- processor: {platform.processor() or 'unknown'}; CPU count: {os.cpu_count()}",
        f"- python: {platform.python_implementation()} {platform.python_version()}",
        f"- numpy: {np.__version__} (BLAS: {blas_description()}); pluggy: {pluggy.__version__}; "
        f"tensorplug: {tp.__version__}",
        f"- tensorplug backend: {tp.get_backend()}; installed backends: {', '.join(tp.list_backends())}",
        f"- source: {source_revision()}",
        f"- load average (1, 5, 15 min) before the run: {load_before}; after: {load_after}",
    ]


def git(*args: str) -> str:
    root = Path(__file__).resolve().parent.parent
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def source_revision() -> str:
    """The git commit measured, and whether the working tree had uncommitted changes."""
    try:
        commit = git("rev-parse", "--short", "HEAD")
        changes = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{commit} (with uncommitted changes)" if changes else commit


def load_average() -> str:
    if not hasattr(os, "getloadavg"):
        return "unknown"
    return ", ".join(f"{load:.2f}" for load in os.getloadavg())


def write_results(path: Path, rows: list[Row], command: str, settings: Settings, load_before: str) -> None:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join(
        [
            "# Benchmark results",
            "",
            f"Measured {now} with:",
            "",
            "```",
            command,
            "```",
            "",
            markdown_table(rows),
            "",
            "Medians per call over "
            f"{settings.repeats} repeats of about {settings.seconds_per_repeat * 1000:g} ms each (reference and "
            "tensorplug repeats interleaved, garbage collector enabled); the import row is the median whole-process "
            f"time over {settings.import_runs} runs. Ratio = tensorplug / reference; targets from issue 8.",
            "",
            "Workloads: the dispatch rows call the kernel directly on 1-element float32 tensors; the recording row "
            f"records {RECORDS_PER_SCOPE} calls per gradient scope (opening and closing the scope included); the "
            "gradient row compares `tp.grad` with the same forward and backward written in NumPy; the MLP rows run "
            "one full SGD step (forward, softmax cross-entropy, backward, update; relu hidden layers; float32) with "
            "`tp.variable_grads` and `Variable.assign` against the same step written in NumPy, each repeat starting "
            "from the same initial weights (the two are checked to give the same loss and updated weights first).",
            "",
            "## Machine",
            "",
            *machine_description(load_before, load_average()),
            "",
        ]
    )
    path.write_text(text, encoding="utf-8")


# -- main ------------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def announce(what: str) -> Iterator[None]:
    print(f"timing {what} ...", file=sys.stderr, flush=True)
    yield


def run_all(settings: Settings) -> list[Row]:
    check_recording_records()
    rows = []
    with announce("dispatch"):
        rows += bench_dispatch(settings)
    with announce("small gradient"):
        rows.append(bench_small_grad(settings))
    with announce("small MLP step"):
        rows.append(bench_mlp([64, 32, 10], 32, 3.0, settings))
    with announce("big MLP step"):
        rows.append(bench_mlp([784, 256, 256, 10], 128, 1.10, settings))
    if torch_backend_available():
        with announce("torch backend"):
            rows += bench_torch(settings)
    with announce("import time"):
        rows.append(bench_import(settings))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny loop counts and few repeats (a smoke test)")
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help=f"where to write the markdown results (default: {DEFAULT_OUTPUT} for a full run, none with --quick)",
    )
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    output = args.output if args.output is not None or args.quick else DEFAULT_OUTPUT

    tp.set_backend("numpy")
    load_before = load_average()
    rows = run_all(settings)
    print_table(rows)
    if output is not None:
        command = " ".join(["python", "benchmarks/bench.py", *(argv if argv is not None else sys.argv[1:])])
        write_results(output, rows, command, settings, load_before)
        print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
