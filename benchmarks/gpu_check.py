"""GPU check for the torch backend: the conformance suite on the CUDA device, and the MLP step timed there.

Run on a machine with CUDA and the torch backend installed:

    python benchmarks/gpu_check.py            # conformance on cuda, then timings
    python benchmarks/gpu_check.py --no-tests # timings only
    python benchmarks/gpu_check.py --graphs   # only the CUDA graphs' comparison (add --quick for a smoke run)

On a GPU machine that cannot reach a package index, `.ci/gpu wheels` (where pip can) and `.ci/gpu check` (there)
install the three distributions from wheels and run all of this, each part under a time limit.

It prints the pytest summary of the torch backend's tests (plugins/backend-torch/tests) run with
TENSORPLUG_TORCH_DEVICE=cuda
(so every conformance case and gradient check runs on the GPU), and, where the
numpy backend is installed too, of the differential tests (every conformance
case on numpy and on the GPU, compared), then the
big MLP SGD step through tensorplug on torch-CUDA against the same step in
raw PyTorch eager mode (medians, with the device synchronised), and the
ratio (target: at most 1.10). Last, the traced small and big MLP steps
(``tp.function``) against raw PyTorch eager with CUDA graphs on and off
(the torch backend's ``cuda_graphs``), whether the step was captured, and
the ratios (targets with graphs: small MLP at most 0.50, big MLP at most
1.00).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

GRAPH_TARGETS = {"small": 0.50, "big": 1.00}  # traced step with graphs / raw PyTorch eager, on CUDA


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-tests", action="store_true", help="skip the conformance run")
    parser.add_argument("--graphs", action="store_true", help="only the CUDA graphs' comparison")
    parser.add_argument("--quick", action="store_true", help="time briefly (a smoke run: the ratios are rough)")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("gpu_check: torch sees no CUDA device here; nothing to check", file=sys.stderr)
        return 2
    os.environ["TENSORPLUG_TORCH_DEVICE"] = "cuda"
    print(f"device: {torch.cuda.get_device_name()} (torch {torch.__version__})", flush=True)
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench

    settings = bench.QUICK if args.quick else bench.FULL
    if args.graphs:
        print_graph_rows(graph_rows(settings, "cuda"))
        return 0
    status = 0
    if not args.no_tests:
        env = {**os.environ, "TENSORPLUG_TORCH_DEVICE": "cuda"}
        import tensorplug as tp

        suites = [["plugins/backend-torch/tests"]]
        if "numpy" in tp.list_backends():
            suites.append(["tests/all/test_differential.py", "tests/all/test_bad_input_differential.py"])
        for suite in suites:
            tests = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *suite], cwd=ROOT, env=env
            )
            status = status or tests.returncode
    rows = bench.bench_torch(settings)
    bench.print_table(rows)
    print_graph_rows(graph_rows(settings, "cuda"))
    return status


def graph_rows(settings: Any, device: str) -> list[tuple[str, str, Any, Any, str]]:
    """Per MLP: (size, workload, row with graphs on, row with graphs off, what became of the step's program), each
    row the traced step against raw PyTorch eager on ``device``, timed side by side."""
    import tensorplug as tp
    from tensorplug._tools._bench import workloads
    from tensorplug_torch import cuda_graph_status

    tp.set_backend("torch", device=device)
    backend = tp.backend()
    bench = workloads.BackendBench(backend, workloads.reference_for(backend), settings)
    results = []
    previous = backend.cuda_graphs
    try:
        for size, workload in (("small", workloads.SMALL_MLP), ("big", workloads.BIG_MLP)):
            timed = {}
            for graphs in (True, False):
                backend.cuda_graphs = graphs  # for the traces made from here on
                timed[graphs] = bench.mlp(workload, workloads.TRACED)
            backend.cuda_graphs = True
            sizes, batch = workloads.MLPS[workload]
            model = workloads.TracedMLP(workloads.make_problem(sizes, batch), f"graph-status-{size}")
            for _ in range(3):
                model.step()
            status = str(cuda_graph_status(model.traced.program()))
            results.append((size, workload, timed[True], timed[False], status))
    finally:
        backend.cuda_graphs = previous
    return results


def print_graph_rows(results: list[tuple[str, str, Any, Any, str]]) -> None:
    print("\nCUDA graphs: tp.function's replays against raw PyTorch eager (ratio of times; lower is faster)")
    for size, workload, on, off, status in results:
        target = GRAPH_TARGETS[size]
        verdict = "met" if on.ratio <= target else "missed"
        print(
            f"  {workload}{' ' * max(0, 40 - len(workload))} graphs on {on.ratio:.2f}x "
            f"({on.tensorplug * 1e6:.0f} us), off {off.ratio:.2f}x ({off.tensorplug * 1e6:.0f} us), "
            f"raw {on.reference * 1e6:.0f} us; target with graphs <= {target:.2f}x: {verdict}; the step's graph: "
            f"{status}"
        )


if __name__ == "__main__":
    raise SystemExit(main())
