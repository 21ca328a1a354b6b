"""What installing a gradient-override package costs a training step: the small MLP with and without
tensorplug-grads-extra (numpy backend).

tensorplug-grads-extra replaces the core's gradients of Log, Sqrt, RealDiv, Pow and FloorDiv with ones that guard
their singularities with a few more kernels; the step's softmax cross-entropy takes its Log gradient. The eager
step with it installed is timed three ways, each in a process of its own (``TENSORPLUG_PLUGINS`` says which
plugins load), interleaved over the rounds, min per configuration:

- ``core``: without tensorplug-grads-extra (only tensorplug-numpy loads);
- ``grads-extra``: with it, its gradients replayed by eager backprop as the core's are (they declare nothing, and a
  gradient a plugin declares is replayed unless it says ``replay=False``);
- ``grads-extra, as written``: with it, its gradients run as written at every backprop (what a plugin gets by
  declaring ``replay=False``), inside a scope that holds them with ``replay=False``.

The traced step (``tp.function``) of ``core`` and ``grads-extra`` is timed too: the extra kernels of the safer
gradients cost what they cost there, the ratio the eager one is to be measured against.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python benchmarks/contributed_gradients.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit

CONFIGS = {
    "core": ("tensorplug-numpy", False),
    "grads-extra": ("tensorplug-numpy,tensorplug-grads-extra", False),
    "grads-extra, as written": ("tensorplug-numpy,tensorplug-grads-extra", True),
}
TARGET = 1.25  # the eager step with grads-extra, at most this times the step without it


def child(as_written: bool) -> dict[str, float]:
    """In a child process: the eager and traced step's least seconds per call."""
    import dataclasses

    import tensorplug as tp
    from tensorplug._tools._bench.references import make_problem
    from tensorplug._tools._bench.workloads import TensorplugMLP, TracedMLP

    tp.set_backend("numpy")
    problem = make_problem([64, 32, 10], 32)
    scope = None
    if as_written:
        extra = [s for s in (tp.get_gradient(k) for k in ("Log", "Sqrt", "RealDiv", "Pow", "FloorDiv")) if s]
        scope = tp.gradient_overrides({s.kernel_name: dataclasses.replace(s, replay=False) for s in extra})
        scope.__enter__()
    results = {}
    for name, kind in (("eager", TensorplugMLP), ("traced", TracedMLP)):
        model = kind(problem, f"bench-{name}")
        model.reset()
        for _ in range(5):  # warm: the second sighting of a signature traces its gradient program
            model.step()
        number = 200
        results[name] = min(timeit.repeat(model.step, number=number, repeat=7)) / number
    results["log_gradient_from"] = tp.get_gradient("Log").source  # type: ignore[assignment]
    if scope is not None:
        scope.__exit__(None, None, None)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", choices=["replayed", "as-written"])
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child == "as-written")))
        return 0
    best: dict[str, dict[str, float]] = {}
    sources: dict[str, str] = {}
    for _ in range(args.rounds):
        for config, (plugins, as_written) in CONFIGS.items():
            env = {**os.environ, "TENSORPLUG_PLUGINS": plugins, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
            command = [sys.executable, __file__, "--child", "as-written" if as_written else "replayed"]
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
            data = json.loads(out.splitlines()[-1])
            sources[config] = data.pop("log_gradient_from")
            for key, seconds in data.items():
                best.setdefault(config, {})[key] = min(seconds, best.get(config, {}).get(key, seconds))
    if sources["core"] != "tensorplug" or sources["grads-extra"] != "tensorplug-grads-extra":
        print(f"the configurations did not load what they should (Log's gradient from: {sources})", file=sys.stderr)
        return 1
    base = best["core"]
    print(f"MLP 64-32-10 batch 32, SGD step, numpy; min over {args.rounds} interleaved rounds of 7 x 200 steps")
    print(f"{'configuration':<26} {'eager':>10} {'ratio':>7} {'traced':>10} {'ratio':>7}")
    for config, times in best.items():
        eager, traced = times["eager"] * 1e6, times["traced"] * 1e6
        print(
            f"{config:<26} {eager:>8.1f}us {times['eager'] / base['eager']:>6.2f}x "
            f"{traced:>8.1f}us {times['traced'] / base['traced']:>6.2f}x"
        )
    ratio = best["grads-extra"]["eager"] / base["eager"]
    verdict = "within" if ratio <= TARGET else "over"
    print(f"eager step with grads-extra: {ratio:.2f}x the step without it, {verdict} the target of {TARGET}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
