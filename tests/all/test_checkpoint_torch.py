"""Checkpoints across backends: saved on torch, loaded and restored on numpy, and back, bit for bit; a restored
Variable keeps its backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

import tensorplug as tp

DTYPES = ["float32", "float64", "int32", "int64", "bool"]


def values(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    arrays = {
        "float32": rng.standard_normal((3, 4)).astype(np.float32),
        "float64": rng.standard_normal(5),
        "int32": rng.integers(-(2**31), 2**31 - 1, (2, 2), dtype=np.int32),
        "int64": np.array([-(2**63), 2**63 - 1, 0], dtype=np.int64),
        "bool": rng.random(6) > 0.5,
    }
    arrays["float32"][0, :3] = [np.nan, -0.0, np.inf]
    return arrays


def model_and_optimizer(seed: int) -> tuple[dict[str, tp.Variable], tp.train.Adam]:
    rng = np.random.default_rng(seed)
    model = {
        "w": tp.variable(rng.standard_normal((4, 3)).astype(np.float32)),
        "b": tp.variable(np.zeros(3, np.float32)),
    }
    return model, tp.train.Adam(0.05)


def steps(model: dict[str, tp.Variable], optimizer: tp.train.Adam, count: int) -> None:
    x = tp.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
    for _ in range(count):
        optimizer.minimize(lambda: tp.sum(tp.square(x @ model["w"] + model["b"] - 1.0)), list(model.values()))


def bits(tree: dict[str, tp.Tensor]) -> dict[str, bytes]:
    return {name: t.numpy().tobytes() for name, t in tree.items()}


@pytest.mark.parametrize(("saver", "loader"), [("torch", "numpy"), ("numpy", "torch")])
def test_every_dtype_saved_on_one_backend_loads_on_the_other(tmp_path: Path, saver: str, loader: str) -> None:
    path = tmp_path / "ckpt.safetensors"
    tp.set_backend(saver)
    tree = {name: tp.tensor(array) for name, array in values(0).items()}
    assert {t.backend for t in tree.values()} == {saver}
    tp.save(path, tree)
    assert bits({k: tp.tensor(v) for k, v in safetensors.numpy.load_file(path).items()}) == bits(tree)
    tp.set_backend(loader)
    checkpoint = tp.load(path)
    assert checkpoint.verified
    assert {t.backend for t in checkpoint.values()} == {loader}
    assert {name: t.dtype for name, t in checkpoint.items()} == {name: name for name in DTYPES}
    assert bits(checkpoint) == bits(tree)


def test_training_saved_on_torch_restores_on_numpy_and_back(tmp_path: Path) -> None:
    on_torch = tmp_path / "torch.safetensors"
    on_numpy = tmp_path / "numpy.safetensors"
    tp.set_backend("torch")
    model, optimizer = model_and_optimizer(1)
    steps(model, optimizer, 3)
    tp.save(on_torch, {"model": model, "optimizer": optimizer}, metadata={"backend": "torch"})
    reference = bits(model)

    tp.set_backend("numpy")
    model_np, optimizer_np = model_and_optimizer(2)
    assert tp.restore(on_torch, {"model": model_np, "optimizer": optimizer_np}) == {"backend": "torch"}
    assert {v.backend for v in model_np.values()} == {"numpy"}
    assert {t.backend for _, slots in optimizer_np.state().slots for t in slots.values()} == {"numpy"}
    assert bits(model_np) == reference
    assert optimizer_np.iterations == 3
    tp.save(on_numpy, {"model": model_np, "optimizer": optimizer_np})

    tp.set_backend("torch")
    model_back, optimizer_back = model_and_optimizer(3)
    tp.restore(on_numpy, {"model": model_back, "optimizer": optimizer_back})
    assert {v.backend for v in model_back.values()} == {"torch"}
    assert bits(model_back) == reference
    steps(model, optimizer, 2)  # the original goes on, and so does the one that went through numpy
    steps(model_back, optimizer_back, 2)
    assert bits(model_back) == bits(model)


def test_a_restored_variable_keeps_its_backend(tmp_path: Path) -> None:
    path = tmp_path / "ckpt.safetensors"
    tp.set_backend("numpy")
    tp.save(path, {"w": tp.tensor([[1.0, 2.0]])})
    tp.set_backend("torch")
    w = tp.variable([[0.0, 0.0]])
    tp.set_backend("numpy")  # the active backend is not the variable's
    tp.restore(path, {"w": w})
    assert w.backend == "torch"
    assert w.tolist() == [[1.0, 2.0]]
