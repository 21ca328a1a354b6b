"""The workloads written without tensorplug: NumPy by hand, and raw PyTorch eager on the torch backend's device.

A reference gets its inputs as float32 NumPy arrays (the same ones tensorplug
gets) and returns timed workloads; ``reference_for`` picks the one a backend
is measured against: raw PyTorch for the torch backend, raw NumPy for every
other. Nothing here imports torch unless a ``TorchReference`` is made.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from tensorplug._runtime._backend import Backend
from tensorplug._tools._bench.cnn import CNNProblem, NumpyCNN, RawTorchCNN
from tensorplug._tools._bench.timing import Workload


def one_element(value: float) -> np.ndarray:
    """A 1-element float32 array."""
    return np.array([value], dtype=np.float32)


def synced(stmt: str, sync: Callable[[], None] | None) -> str:
    """``stmt`` followed by a wait for the device when there is one to wait for (CUDA runs asynchronously)."""
    return stmt if sync is None else f"{stmt}; sync()"


@dataclass(frozen=True)
class Timed:
    """A reference workload and what it calls, as the table names it."""

    name: str
    workload: Workload


# -- the MLP problem -------------------------------------------------------------------------------------------------


@dataclass
class MLPProblem:
    """One batch of data and the initial weights, shared by every implementation of the step."""

    x: np.ndarray
    onehot: np.ndarray
    weights: list[np.ndarray]  # W1, b1, W2, b2, ...
    learning_rate: float = 0.01


def make_problem(sizes: list[int], batch: int, seed: int = 0) -> MLPProblem:
    """Random float32 data, labels and He-initialised weights for layers of ``sizes``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    labels = rng.integers(0, sizes[-1], batch)
    onehot = np.eye(sizes[-1], dtype=np.float32)[labels]
    weights = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        weights.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(np.float32))
        weights.append(np.zeros(fan_out, dtype=np.float32))
    return MLPProblem(x, onehot, weights)


class MLPStep(Protocol):
    """One implementation of the SGD step: ``step`` updates the weights, ``reset`` brings the initial ones back."""

    def step(self) -> object: ...

    def reset(self) -> None: ...

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        """One step from the initial weights: its loss and the updated weights (for the checks)."""
        ...


class Reference(Protocol):
    """What a backend is measured against: each workload of the benchmark, written without tensorplug."""

    name: str  # "raw NumPy", "raw PyTorch eager"
    mlp_name: str  # what the MLP step rows call the reference step
    sync: Callable[[], None] | None  # what waits for the device, None on the CPU

    def add(self, a: np.ndarray, b: np.ndarray) -> Timed: ...

    def recording_add(self, a: np.ndarray, b: np.ndarray) -> Timed: ...

    def operator_add(self, a: np.ndarray, b: np.ndarray) -> Timed: ...

    def small_grad(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[Timed, np.ndarray]:
        """The gradient of sum(tanh(x*w+b)) w.r.t. x, timed, and its value."""
        ...

    def mlp(self, problem: MLPProblem) -> MLPStep: ...

    def cnn(self, problem: CNNProblem) -> MLPStep: ...


def reference_for(backend: Backend) -> Reference:
    """Raw PyTorch eager on the same device for the torch backend; raw NumPy for every other backend."""
    if backend.name == "torch":
        return TorchReference(backend.device)
    return NumpyReference()


# -- raw NumPy -------------------------------------------------------------------------------------------------------


def numpy_small_grad(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward and backward of sum(tanh(x * w + b)) by hand: (value, d/dx)."""
    t = np.tanh(x * w + b)
    value = t.sum()
    return value, (1.0 - t * t) * w


class NumpyMLP:
    """The SGD step written by hand in NumPy: relu hidden layers, softmax cross-entropy averaged over the batch."""

    def __init__(self, problem: MLPProblem) -> None:
        self.problem = problem
        self.x = problem.x
        self.onehot = problem.onehot
        self.learning_rate = np.float32(problem.learning_rate)
        self.params: list[np.ndarray] = []
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
        grads: list[np.ndarray] = [dz] * len(params)  # every entry is overwritten below
        for i in reversed(range(layers)):
            grads[2 * i] = inputs[i].T @ dz
            grads[2 * i + 1] = dz.sum(axis=0)
            if i > 0:
                dz = (dz @ params[2 * i].T) * (pre_activations[i - 1] > 0)
        self.update(grads)
        return float(loss)

    def update(self, grads: list[np.ndarray]) -> None:
        """The SGD update, in place."""
        for p, g in zip(self.params, grads, strict=True):
            p -= self.learning_rate * g

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = self.step()
        return loss, [p.copy() for p in self.params]


class NumpyReference:
    """The workloads in NumPy: ``np.add`` for the dispatch rows, forward and backward written by hand."""

    name = "raw NumPy"
    mlp_name = "NumPy by hand"
    sync: Callable[[], None] | None = None

    def add(self, a: np.ndarray, b: np.ndarray) -> Timed:
        return Timed("np.add", Workload("add(a, b)", {"add": np.add, "a": a, "b": b}))

    def recording_add(self, a: np.ndarray, b: np.ndarray) -> Timed:
        return self.add(a, b)  # NumPy records nothing: the cost of recording is all tensorplug's

    def operator_add(self, a: np.ndarray, b: np.ndarray) -> Timed:
        return self.add(a, b)

    def small_grad(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[Timed, np.ndarray]:
        namespace = {"numpy_small_grad": numpy_small_grad, "x": x, "w": w, "b": b}
        timed = Timed("NumPy by hand", Workload("numpy_small_grad(x, w, b)", namespace))
        return timed, numpy_small_grad(x, w, b)[1]

    def mlp(self, problem: MLPProblem) -> NumpyMLP:
        return NumpyMLP(problem)

    def cnn(self, problem: CNNProblem) -> NumpyCNN:
        return NumpyCNN(problem)


# -- HIPS autograd (optional: pip install autograd) --------------------------------------------------------------------


def autograd_available() -> bool:
    """Whether HIPS autograd can be imported (it is an optional comparison, never a requirement)."""
    import importlib.util

    return importlib.util.find_spec("autograd") is not None


def autograd_small_grad() -> Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """d/dx sum(tanh(x * w + b)) by HIPS autograd: ``f(x, w, b)``."""
    import autograd
    import autograd.numpy as anp

    return autograd.grad(lambda x, w, b: anp.sum(anp.tanh(x * w + b)))  # type: ignore[no-any-return]


class AutogradMLP:
    """The same SGD step with HIPS autograd computing the gradients (its tape records NumPy calls)."""

    def __init__(self, problem: MLPProblem) -> None:
        import autograd
        import autograd.numpy as anp

        self.problem = problem
        self.params: list[np.ndarray] = []
        layers = len(problem.weights) // 2

        def loss(params: list[Any]) -> Any:
            h = problem.x
            for i in range(layers):
                h = anp.dot(h, params[2 * i]) + params[2 * i + 1]
                if i < layers - 1:
                    h = anp.maximum(h, 0.0)
            shifted = h - anp.max(h, axis=1, keepdims=True)
            log_probs = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
            return -anp.sum(log_probs * problem.onehot) / h.shape[0]

        self.value_and_grad = autograd.value_and_grad(loss)
        self.reset()

    def reset(self) -> None:
        self.params = [p.copy() for p in self.problem.weights]

    def step(self) -> float:
        value, grads = self.value_and_grad(self.params)
        rate = np.float32(self.problem.learning_rate)
        for p, g in zip(self.params, grads, strict=True):
            p -= rate * g
        return float(value)

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = self.step()
        return loss, [p.copy() for p in self.params]


# -- JAX (optional: pip install jax jaxlib) ---------------------------------------------------------------------------


def jax_available() -> bool:
    """Whether JAX can be imported (an optional comparison, as HIPS autograd; never a requirement)."""
    import importlib.util

    return importlib.util.find_spec("jax") is not None


def jax_small_grad(w: np.ndarray, b: np.ndarray, jit: bool) -> Callable[[Any], Any]:
    """d/dx sum(tanh(x * w + b)) by ``jax.grad`` (under ``jax.jit`` when ``jit``): ``f(x)``, waiting for the result."""
    import jax
    import jax.numpy as jnp

    df = jax.grad(lambda x: jnp.sum(jnp.tanh(x * w + b)))
    if jit:
        df = jax.jit(df)

    def f(x: Any) -> Any:
        return df(x).block_until_ready()

    return f


class JaxMLP:
    """The same SGD step as one ``jax.jit`` function of the weights (value_and_grad, then the update), as JAX
    programs are written: the weights go in and come back."""

    def __init__(self, problem: MLPProblem) -> None:
        import jax
        import jax.numpy as jnp

        self.problem = problem
        self.x, self.onehot = jnp.asarray(problem.x), jnp.asarray(problem.onehot)
        rate = problem.learning_rate
        layers = len(problem.weights) // 2

        def loss(params: list[Any], x: Any, onehot: Any) -> Any:
            h = x
            for i in range(layers):
                h = h @ params[2 * i] + params[2 * i + 1]
                if i < layers - 1:
                    h = jax.nn.relu(h)
            return -jnp.sum(jax.nn.log_softmax(h) * onehot) / h.shape[0]

        def step(params: list[Any], x: Any, onehot: Any) -> tuple[Any, list[Any]]:
            value, grads = jax.value_and_grad(loss)(params, x, onehot)
            return value, [p - rate * g for p, g in zip(params, grads, strict=True)]

        self.jitted = jax.jit(step)
        self.params: list[Any] = []
        self.reset()

    def reset(self) -> None:
        import jax.numpy as jnp

        self.params = [jnp.asarray(p) for p in self.problem.weights]

    def step(self) -> float:
        value, self.params = self.jitted(self.params, self.x, self.onehot)
        return float(value)  # waits for the step, as the other implementations' steps do

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = self.step()
        return loss, [np.asarray(p) for p in self.params]


# -- raw PyTorch eager -----------------------------------------------------------------------------------------------


class RawTorchMLP:
    """The same SGD step in plain PyTorch eager mode: autograd for the gradients, an in-place update."""

    def __init__(self, problem: MLPProblem, device: str) -> None:
        import torch

        self.torch = torch
        self.problem = problem
        self.device = device
        self.x = torch.from_numpy(problem.x).to(device)
        self.labels = torch.from_numpy(problem.onehot.argmax(axis=1)).to(device)
        self.params: list[Any] = []
        self.reset()

    def reset(self) -> None:
        """Back to the initial weights."""
        torch = self.torch
        self.params = [torch.from_numpy(p.copy()).to(self.device).requires_grad_(True) for p in self.problem.weights]

    def step(self) -> Any:
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

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = float(self.step().detach())
        return loss, [p.detach().cpu().numpy() for p in self.params]


class TorchReference:
    """The workloads in raw PyTorch eager mode on ``device``, waiting for the device after each call on CUDA."""

    name = "raw PyTorch eager"
    mlp_name = "raw PyTorch eager"

    def __init__(self, device: str) -> None:
        import torch

        self.torch = torch
        self.device = device
        self.sync: Callable[[], None] | None = torch.cuda.synchronize if device.startswith("cuda") else None

    def tensor(self, array: np.ndarray, requires_grad: bool = False) -> Any:
        return self.torch.from_numpy(array.copy()).to(self.device).requires_grad_(requires_grad)

    def _timed(self, name: str, stmt: str, namespace: dict[str, object]) -> Timed:
        return Timed(name, Workload(synced(stmt, self.sync), {**namespace, "sync": self.sync}))

    def add(self, a: np.ndarray, b: np.ndarray) -> Timed:
        ta, tb = self.tensor(a), self.tensor(b)
        return self._timed("torch.add", "add(ta, tb)", {"add": self.torch.add, "ta": ta, "tb": tb})

    def recording_add(self, a: np.ndarray, b: np.ndarray) -> Timed:
        ta, tb = self.tensor(a, requires_grad=True), self.tensor(b)
        namespace = {"add": self.torch.add, "ta": ta, "tb": tb}
        return self._timed("torch.add, requires_grad", "add(ta, tb)", namespace)

    def operator_add(self, a: np.ndarray, b: np.ndarray) -> Timed:
        return self._timed("torch.Tensor +", "ta + tb", {"ta": self.tensor(a), "tb": self.tensor(b)})

    def small_grad(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[Timed, np.ndarray]:
        torch = self.torch

        def torch_small_grad(x: Any, w: Any, b: Any) -> Any:
            (dx,) = torch.autograd.grad(torch.tanh(x * w + b).sum(), x)
            return dx

        tx, tw, tb = self.tensor(x, requires_grad=True), self.tensor(w), self.tensor(b)
        namespace = {"torch_small_grad": torch_small_grad, "x": tx, "w": tw, "b": tb}
        timed = self._timed("torch.autograd.grad", "torch_small_grad(x, w, b)", namespace)
        return timed, torch_small_grad(tx, tw, tb).cpu().numpy()

    def mlp(self, problem: MLPProblem) -> RawTorchMLP:
        return RawTorchMLP(problem, self.device)

    def cnn(self, problem: CNNProblem) -> RawTorchCNN:
        return RawTorchCNN(problem, self.device)
