"""GPU check for the torch backend: the conformance suite on the CUDA device, and the MLP step timed there.

Run on a machine with CUDA and the torch backend installed:

    python benchmarks/gpu_check.py            # conformance on cuda, then timings
    python benchmarks/gpu_check.py --no-tests # timings only

It prints the pytest summary of the torch backend's tests (plugins/backend-torch/tests) run with
TENSORPLUG_TORCH_DEVICE=cuda
(so every conformance case and gradient check runs on the GPU), and, where the
numpy backend is installed too, of the differential tests (every conformance
case on numpy and on the GPU, compared), then the
big MLP SGD step through tensorplug on torch-CUDA against the same step in
raw PyTorch eager mode (medians, with the device synchronised), and the
ratio (target: at most 1.10).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-tests", action="store_true", help="skip the conformance run")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("gpu_check: torch sees no CUDA device here; nothing to check", file=sys.stderr)
        return 2
    os.environ["TENSORPLUG_TORCH_DEVICE"] = "cuda"
    print(f"device: {torch.cuda.get_device_name()} (torch {torch.__version__})", flush=True)
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
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench

    rows = bench.bench_torch(bench.FULL)
    bench.print_table(rows)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
