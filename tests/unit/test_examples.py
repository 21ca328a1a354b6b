"""Smoke tests of the scripts users run: the example training job and the benchmark script (in quick mode)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOSS = re.compile(r"^epoch\s+\d+\s+loss\s+(\S+)$", re.MULTILINE)


def run_script(*args: str | Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
    )


def test_train_mlp_loss_falls() -> None:
    result = run_script(ROOT / "examples" / "train_mlp.py")
    assert result.returncode == 0, result.stdout + result.stderr
    losses = [float(value) for value in LOSS.findall(result.stdout)]
    assert len(losses) >= 2, result.stdout
    assert losses[-1] < losses[0], f"the loss did not fall: {losses}"
    assert "final training accuracy" in result.stdout


def test_bench_quick_runs(tmp_path: Path) -> None:
    output = tmp_path / "RESULTS.md"
    result = run_script(ROOT / "benchmarks" / "bench.py", "--quick", "--output", output, timeout=300)  # a busy CI
    assert result.returncode == 0, result.stdout + result.stderr
    for workload in ("run_kernel Add", "grad of sum(tanh", "MLP 64-32-10", "MLP 784-256-256-10", "import tensorplug"):
        assert workload in result.stdout, result.stdout
    text = output.read_text(encoding="utf-8")
    assert "| workload |" in text
    assert "## Machine" in text


def test_budget_quick_runs() -> None:
    result = run_script(ROOT / "benchmarks" / "budget.py", "--quick")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = ["dispatch: lookup, unwrap", "recording one kernel", "the backward pass from its program"]
    expected += ["walked record by record instead", "= tp.grads"]
    for line in expected:
        assert line in result.stdout, result.stdout


def test_floors_quick_runs() -> None:
    result = run_script(ROOT / "benchmarks" / "floors.py", "--quick")
    assert result.returncode == 0, result.stdout + result.stderr
    for line in (
        "least dispatch under the convention",
        "small grad, 1 element",
        "MLP 784-256-256-10 batch 128",
        "of it, the update through assign, beyond p -= rate * g",
    ):
        assert line in result.stdout, result.stdout
    # the kernel counts come from tp.profile of the very workloads: the small gradient runs 4 forward kernels,
    # the OnesLike seed and at least the gradients of tanh and of the sum
    small = next(row for row in result.stdout.splitlines() if "small grad" in row)
    assert int(small.split()[-5]) >= 8, small


def test_traced_floors_quick_runs() -> None:
    result = run_script(ROOT / "benchmarks" / "traced_floors.py", "--quick")
    assert result.returncode == 0, result.stdout + result.stderr
    for line in ("NumPy's BLAS:", "MLP 784-256-256-10 batch 128, SGD step", "matrix products alone", "tp.function"):
        assert line in result.stdout, result.stdout
    assert result.stdout.count("elementwise work:") == 2, result.stdout
    # the step in place is timed only once it gave the hand-written step's loss and weights (else the script exits 1)
    assert result.stdout.count("NumPy by hand, in place") == 2, result.stdout
    assert result.stdout.count("against the step in place:") == 2, result.stdout


# -- examples/dask_regression.py -----------------------------------------------------------------------------------

DASK_REGRESSION = ROOT / "examples" / "dask_regression.py"
HELP_LINE = re.compile(r"^  (--[a-z-]+)(?: [A-Z_]+)?(?:\s{2,}(.*))?$")


def test_dask_regression_help_explains_every_flag() -> None:
    done = run_script(DASK_REGRESSION, "--help")
    assert done.returncode == 0, done.stderr
    flags = {}
    lines = [*done.stdout.splitlines(), ""]
    for i, line in enumerate(lines):
        match = HELP_LINE.match(line)
        if match is not None:  # argparse puts the help on the next line when the flag is long
            below = lines[i + 1] if lines[i + 1].startswith(" " * 20) else ""
            flags[match.group(1)] = (match.group(2) or below).strip()
    assert all(text and not text.startswith("--") for text in flags.values()), flags
    assert set(flags) == {"--rows", "--features", "--chunk-rows", "--steps", "--lr", "--workers", "--seed",
                          "--scheduler"}  # fmt: skip
    assert "--scheduler ADDRESS" in done.stdout
    assert "(default: 20)" in flags["--steps"]
