"""Training resumes exactly: N steps, tp.save (variables and optimizer), then in a fresh process tp.restore and M
more steps give the bits of N + M steps in one go, for SGD, Momentum and Adam, eager and traced (tp.function)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

# One training run: a 2-layer MLP on fixed data, the batch of step k being rows 16k..16k+15 (mod 64), steps
# [start, stop). "first" trains from the initial values and saves; "resume" starts from other values and other
# hyper-parameters, restores (so both must come from the file), and goes on; "full" runs all the steps. Each
# prints a digest of the variables' and the optimizer's slots' bytes and the iteration count.
TRAIN = textwrap.dedent(
    """
    import hashlib, json, sys
    import numpy as np
    import tensorplug as tp

    backend, optimizer_name, mode, path, phases = sys.argv[1:6]
    tp.set_backend(backend)
    data = np.random.default_rng(7)
    x_all = data.standard_normal((64, 8)).astype(np.float32)
    y_all = np.eye(3, dtype=np.float32)[data.integers(0, 3, 64)]
    kinds = {"SGD": tp.train.SGD, "Momentum": tp.train.Momentum, "Adam": tp.train.Adam}
    configs = {"SGD": {"learning_rate": 0.1}, "Momentum": {"learning_rate": 0.05, "momentum": 0.9},
               "Adam": {"learning_rate": 0.01}}

    def run(phase, start, stop):
        resuming = phase.startswith("resume")
        init = np.random.default_rng(99 if resuming else 1)  # a resumed run starts elsewhere: the file must win
        model = {
            "w1": tp.variable((init.standard_normal((8, 16)) * 0.4).astype(np.float32)),
            "b1": tp.variable(np.zeros(16, np.float32)),
            "w2": tp.variable((init.standard_normal((16, 3)) * 0.4).astype(np.float32)),
            "b2": tp.variable(np.zeros(3, np.float32)),
        }
        config = dict(configs[optimizer_name])
        if phase == "resume":  # and with another learning rate
            config["learning_rate"] *= 10
        optimizer = kinds[optimizer_name](**config)
        tree = {"model": model, "optimizer": optimizer}
        if phase == "resume":
            tp.restore(path, tree)
        elif phase == "resume-model-only":  # the optimizer's state left out: the run must differ (the test can fail)
            tp.restore(path, {"model": model}, strict=False)

        def step(x, y):
            def loss():
                hidden = tp.relu(x @ model["w1"] + model["b1"])
                return tp.losses.softmax_cross_entropy(y, hidden @ model["w2"] + model["b2"])
            return optimizer.minimize(loss, list(model.values()))

        train = tp.function(step) if mode == "traced" else step
        for k in range(start, stop):
            rows = slice(16 * k % 64, 16 * k % 64 + 16)
            train(tp.tensor(x_all[rows]), tp.tensor(y_all[rows]))
        if phase == "first":
            tp.save(path, tree, metadata={"steps": stop})
        digest = hashlib.sha256()
        for v in model.values():
            digest.update(v.numpy().tobytes())
        slots_of = {id(v): slots for v, slots in optimizer.state().slots}
        for v in model.values():
            for name, slot in sorted(slots_of.get(id(v), {}).items()):
                digest.update(name.encode() + slot.numpy().tobytes())
        traces = train.trace_count if mode == "traced" else 0
        return {"digest": digest.hexdigest(), "iterations": optimizer.iterations, "traces": traces}

    print(json.dumps({phase: run(phase, start, stop) for phase, start, stop in json.loads(phases)}))
    """
)
N, M = 5, 4


def train(tmp_path: Path, backend: str, optimizer: str, mode: str, *phases: tuple[str, int, int]) -> dict[str, Any]:
    """Run TRAIN's ``phases`` (name, first step, end) in one fresh interpreter; their results by name."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    path = tmp_path / f"{backend}-{optimizer}-{mode}.safetensors"
    args = [backend, optimizer, mode, str(path), json.dumps(phases)]
    done = subprocess.run(
        [sys.executable, "-c", TRAIN, *args], capture_output=True, text=True, env=environment, timeout=120
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


@pytest.mark.parametrize("mode", ["eager", "traced"])
@pytest.mark.parametrize("optimizer", ["SGD", "Momentum", "Adam"])
def test_training_resumed_in_a_fresh_process_gives_the_same_bits(tmp_path: Path, optimizer: str, mode: str) -> None:
    before = train(tmp_path, "numpy", optimizer, mode, ("full", 0, N + M), ("first", 0, N))
    after = train(tmp_path, "numpy", optimizer, mode, ("resume", N, N + M), ("resume-model-only", N, N + M))
    full, first, resumed = before["full"], before["first"], after["resume"]
    assert first["iterations"] == N
    assert resumed["iterations"] == full["iterations"] == N + M
    assert resumed["digest"] == full["digest"]
    assert first["digest"] != full["digest"]
    if mode == "traced":
        assert resumed["traces"] == full["traces"] == 1
    if optimizer != "SGD":  # the optimizer's slots count: without them the run goes elsewhere
        assert after["resume-model-only"]["digest"] != full["digest"]
