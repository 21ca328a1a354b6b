"""Does torch.compile pay for the big MLP step on this machine? Raw PyTorch only, eager vs torch.compile.

    python benchmarks/torch_compile_probe.py [--device cpu|cuda]

The 784-256-256-10 MLP SGD step on a batch of 128 (relu, softmax cross-entropy, torch.autograd.grad, an
in-place update), written in raw PyTorch as tensorplug bench's reference writes it, timed eagerly and after
``torch.compile`` (the compile time is printed apart). It tells whether a torch lowering of tp.function
programs through torch.compile can pay here before anyone builds one.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    options = parser.parse_args()
    device = options.device
    torch.manual_seed(0)
    sizes, batch = [784, 256, 256, 10], 128
    x = torch.randn(batch, sizes[0], device=device)
    y = torch.randint(0, sizes[-1], (batch,), device=device)
    weights = [(torch.randn(a, b, device=device) * 0.05).requires_grad_() for a, b in itertools.pairwise(sizes)]
    biases = [torch.zeros(b, device=device).requires_grad_() for b in sizes[1:]]
    params = weights + biases

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        h = x
        for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
            h = h @ w + b
            if i < len(weights) - 1:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h, y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads, strict=True):
                p.sub_(0.1 * g)
        return loss

    def timed(f: Callable[..., Any], calls: int = 200) -> tuple[float, float]:
        for _ in range(20):
            f(x, y)
        times = []
        for _ in range(7):
            if device != "cpu":
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                f(x, y)
            if device != "cpu":
                torch.cuda.synchronize()
            times.append((time.perf_counter() - start) / calls)
        return min(times), statistics.median(times)

    eager = timed(step)
    start = time.perf_counter()
    compiled_step = torch.compile(step)
    compiled_step(x, y)
    compile_seconds = time.perf_counter() - start
    compiled = timed(compiled_step)
    print(f"device {device}, torch {torch.__version__}, threads {torch.get_num_threads()}")
    print(f"eager:          min {eager[0] * 1e3:.3f} ms  median {eager[1] * 1e3:.3f} ms")
    compiled_text = f"min {compiled[0] * 1e3:.3f} ms  median {compiled[1] * 1e3:.3f} ms"
    print(f"torch.compile:  {compiled_text}  (compile {compile_seconds:.1f} s)")


if __name__ == "__main__":
    main()
