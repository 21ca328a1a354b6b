"""Checkpoints on the torch backend: training saved after N steps and resumed in a fresh process gives the bits of
N + M steps in one go (SGD, Momentum, Adam; eager and traced), and every dtype round-trips."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

# Runs each (optimizer, mode) of argv[2] on torch: phase "before" trains N + M steps in one go ("full") and N steps
# that it saves ("first"); phase "after", in another interpreter, starts from other values and another learning
# rate, restores the file, and trains M steps. Prints a digest of the variables' and slots' bytes per case.
TRAIN = textwrap.dedent(
    """
    import hashlib, json, os, sys
    import numpy as np
    import tensorplug as tp

    phase, cases, folder, n, m = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
    tp.set_backend("torch")
    data = np.random.default_rng(7)
    x_all = data.standard_normal((64, 8)).astype(np.float32)
    y_all = np.eye(3, dtype=np.float32)[data.integers(0, 3, 64)]
    kinds = {"SGD": (tp.train.SGD, 0.1), "Momentum": (tp.train.Momentum, 0.05), "Adam": (tp.train.Adam, 0.01)}

    def run(name, mode, start, stop, restore_from=None, save_to=None):
        init = np.random.default_rng(99 if restore_from else 1)
        model = {
            "w1": tp.variable((init.standard_normal((8, 16)) * 0.4).astype(np.float32)),
            "b1": tp.variable(np.zeros(16, np.float32)),
            "w2": tp.variable((init.standard_normal((16, 3)) * 0.4).astype(np.float32)),
        }
        kind, rate = kinds[name]
        rate *= 10 if restore_from else 1
        optimizer = kind(rate, 0.9) if name == "Momentum" else kind(rate)
        if restore_from:
            tp.restore(restore_from, {"model": model, "optimizer": optimizer})

        def step(x, y):
            def loss():
                logits = tp.relu(x @ model["w1"] + model["b1"]) @ model["w2"]
                return tp.losses.softmax_cross_entropy(y, logits)
            return optimizer.minimize(loss, list(model.values()))

        train = tp.function(step) if mode == "traced" else step
        for k in range(start, stop):
            rows = slice(16 * k % 64, 16 * k % 64 + 16)
            train(tp.tensor(x_all[rows]), tp.tensor(y_all[rows]))
        if save_to:
            tp.save(save_to, {"model": model, "optimizer": optimizer})
        digest = hashlib.sha256()
        slots_of = {id(v): slots for v, slots in optimizer.state().slots}
        for v in model.values():
            digest.update(v.numpy().tobytes())
            for slot, value in sorted(slots_of.get(id(v), {}).items()):
                digest.update(slot.encode() + value.numpy().tobytes())
        return {"digest": digest.hexdigest(), "iterations": optimizer.iterations, "backend": model["w1"].backend}

    results = {}
    for name, mode in cases:
        path = os.path.join(folder, f"{name}-{mode}.safetensors")
        if phase == "before":
            results[f"{name}-{mode}"] = {
                "full": run(name, mode, 0, n + m),
                "first": run(name, mode, 0, n, save_to=path),
            }
        else:
            results[f"{name}-{mode}"] = {"resume": run(name, mode, n, n + m, restore_from=path)}
    print(json.dumps(results))
    """
)
CASES = [(name, mode) for name in ("SGD", "Momentum", "Adam") for mode in ("eager", "traced")]
N, M = 5, 4


def train(phase: str, folder: Path) -> dict[str, Any]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    environment["OMP_NUM_THREADS"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", TRAIN, phase, json.dumps(CASES), str(folder), str(N), str(M)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def test_training_resumed_in_a_fresh_process_gives_the_same_bits_on_torch(tmp_path: Path) -> None:
    before = train("before", tmp_path)
    after = train("after", tmp_path)  # another interpreter: nothing but the files carries over
    for name, mode in CASES:
        case = f"{name}-{mode}"
        full, first, resumed = before[case]["full"], before[case]["first"], after[case]["resume"]
        assert resumed["backend"] == "torch"
        assert first["iterations"] == N
        assert resumed["iterations"] == full["iterations"] == N + M
        assert first["digest"] != full["digest"], case
        assert resumed["digest"] == full["digest"], case


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_every_dtype_round_trips_on_torch(tmp_path: Path, dtype: str) -> None:
    path = tmp_path / "ckpt.safetensors"
    rng = np.random.default_rng(0)
    if dtype == "bool":
        array = rng.random((2, 3)) > 0.5
    elif dtype.startswith("int"):
        info = np.iinfo(dtype)
        array = np.array([[info.min, 0, info.max]] * 2, dtype=dtype)
    else:
        array = rng.standard_normal((2, 3)).astype(dtype)
        array[0] = [np.nan, -0.0, -np.inf]
    w = tp.variable(array)
    assert w.backend == "torch"
    tp.save(path, {"w": w})
    loaded = tp.load(path)["w"]
    assert loaded.backend == "torch"
    assert loaded.dtype == dtype
    assert loaded.numpy().tobytes() == array.tobytes()
    back = tp.variable(np.zeros_like(array))
    tp.restore(path, {"w": back})
    assert back.numpy().tobytes() == array.tobytes()
