"""A kernel registered at runtime by user code, with its gradient, against the same computation as a built-in
kernel: the gradient of ``sum(tanh(x * w + b))`` where the tanh is ``tp.tanh`` (the core's Tanh) or
``tp.run_kernel("UserTanh", ...)``, a kernel and a gradient the user registered
(``kernel_factories.unary(np.tanh)`` / ``unary(torch.tanh)``, and ``dy * (1 - y * y)`` declared
``replay=True``). Eager and traced (``tp.function``), on numpy and torch, at one element (where the per-op cost
shows) and at 256x256 (where the arithmetic does). Both rows of a pair are timed side by side in one process: min
over interleaved repeats; the ratio is the user kernel's time over the built-in's.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/user_kernels.py [--backend numpy|torch]
"""

from __future__ import annotations

import argparse
import sys
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.kernel_factories import unary

TARGET = 1.10  # a user's kernel, at most this times the built-in one
SIZES = {"1 element": (1,), "256x256": (256, 256)}


def register(backend: str) -> None:
    """The user's kernel on ``backend`` and its gradient, as user code registers them: the kernel made with
    ``kernel_factories.unary``, which declares the function it applies (a lowering calls it directly)."""
    if backend == "torch":
        import torch

        tp.register_kernel("UserTanh", "torch", unary(torch.tanh))
    else:
        tp.register_kernel("UserTanh", backend, unary(np.tanh))
    tp.register_gradient(
        "UserTanh", lambda dy, saved, attrs: (dy * (1.0 - saved[0] * saved[0]),), outputs_to_save=[0], replay=True
    )


def loss(tanh: Callable[[Any], Any]) -> Callable[..., Any]:
    return lambda x, w, b: tp.sum(tanh(x * w + b))


def gradients(f: Callable[..., Any]) -> Callable[..., Any]:
    return lambda x, w, b: tp.grads(f)([x, w, b])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", default="numpy")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    tp.set_backend(args.backend)
    register(args.backend)
    builtin = loss(tp.tanh)
    user = loss(lambda h: tp.run_kernel("UserTanh", {"x": h}))
    print(f"gradient of sum(tanh(x*w+b)), {args.backend}; min of {args.repeat} interleaved repeats")
    print(f"{'workload':<28} {'built-in':>10} {'user kernel':>12} {'ratio':>7}")
    worst = 0.0
    for size_name, shape in SIZES.items():
        rng = np.random.default_rng(0)
        x, w, b = (tp.tensor(rng.standard_normal(shape).astype(np.float32)) for _ in range(3))
        for how in ("eager", "traced"):
            fns = []
            for f in (builtin, user):
                g = gradients(f)
                if how == "traced":
                    g = tp.function(g)
                for _ in range(3):
                    g(x, w, b)
                fns.append(g)
            np.testing.assert_allclose(
                [t.numpy() for t in fns[0](x, w, b)], [t.numpy() for t in fns[1](x, w, b)], rtol=1e-6
            )
            number = 2000 if shape == (1,) else 50
            best = [float("inf"), float("inf")]
            for _ in range(args.repeat):
                for i, g in enumerate(fns):
                    seconds = timeit.timeit("g(x, w, b)", globals={"g": g, "x": x, "w": w, "b": b}, number=number)
                    best[i] = min(best[i], seconds / number)
            ratio = best[1] / best[0]
            worst = max(worst, ratio)
            print(f"{size_name + ', ' + how:<28} {best[0] * 1e6:>8.2f}us {best[1] * 1e6:>10.2f}us {ratio:>6.2f}x")
    verdict = "within" if worst <= TARGET else "over"
    print(f"worst ratio {worst:.2f}x: {verdict} the target of {TARGET}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
