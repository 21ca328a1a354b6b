"""The convolutional network of the benchmark: its problem, its step with tensorplug, and the same step by hand.

One Adam step of a small CNN on a batch of 32 handwritten digits (8x8, from
``tensorplug.datasets.load_digits``): conv 3x3 with 16 filters ("same") and
ReLU, max pool 2x2, conv 3x3 with 32 filters ("same") and ReLU, max pool 2x2,
dense to 10 classes, softmax cross-entropy averaged over the batch. Each
implementation takes the same initial weights and batch; each lays images out
as its library prefers (NHWC for tensorplug and NumPy, NCHW for PyTorch) and
reports its updated weights in tensorplug's layout, so that they can be
compared. Nothing here imports torch unless a ``RawTorchCNN`` is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import tensorplug as tp

CNN = "digits CNN conv16-pool-conv32-pool-dense batch 32, Adam step"
BATCH = 32
FILTERS = (16, 32)
CLASSES = 10
LEARNING_RATE = 0.001
EPSILON = 1e-8  # PyTorch's default; tensorplug's is 1e-7
BETAS = (0.9, 0.999)


@dataclass
class CNNProblem:
    """One batch of digits [32, 8, 8, 1] (pixels scaled to 0..1), its one-hot labels, and the initial weights:
    conv filters [3, 3, in, out] and biases, then the dense layer [128, 10] (rows in NHWC order) and its bias."""

    x: np.ndarray
    onehot: np.ndarray
    weights: list[np.ndarray]  # W1, b1, W2, b2, W3, b3


def make_cnn_problem(seed: int = 0) -> CNNProblem:
    """The first 32 digits and He-initialised float32 weights."""
    from tensorplug.datasets import load_digits

    images, labels = load_digits()
    x = (images[:BATCH] / np.float32(16)).reshape(BATCH, 8, 8, 1)
    onehot = np.eye(CLASSES, dtype=np.float32)[labels[:BATCH]]
    rng = np.random.default_rng(seed)
    weights = []
    channels = 1
    for filters in FILTERS:
        fan_in = 9 * channels
        weights.append((rng.standard_normal((3, 3, channels, filters)) * np.sqrt(2.0 / fan_in)).astype(np.float32))
        weights.append(np.zeros(filters, dtype=np.float32))
        channels = filters
    features = 2 * 2 * channels  # 8x8 pooled twice
    weights.append((rng.standard_normal((features, CLASSES)) * np.sqrt(2.0 / features)).astype(np.float32))
    weights.append(np.zeros(CLASSES, dtype=np.float32))
    return CNNProblem(x, onehot, weights)


# -- tensorplug ------------------------------------------------------------------------------------------------------


class TensorplugCNN:
    """The step with tensorplug: ``tp.train.Adam(...).minimize(loss, variables)``, through ``tp.function`` when
    ``traced`` (traced on the first call, replayed after)."""

    def __init__(self, problem: CNNProblem, prefix: str, traced: bool = False) -> None:
        self.problem = problem
        self.x = tp.tensor(problem.x)
        self.onehot = tp.tensor(problem.onehot)
        names = ["conv1/W", "conv1/b", "conv2/W", "conv2/b", "dense/W", "dense/b"]
        self.params = [tp.variable(p.copy(), name=f"{prefix}/{n}") for p, n in zip(problem.weights, names, strict=True)]
        self.optimizer = tp.train.Adam(LEARNING_RATE, *BETAS, epsilon=EPSILON)
        self.fresh = self.optimizer.state()  # no step taken, no slots
        self.take_step = tp.function(self.eager_step) if traced else self.eager_step

    def reset(self) -> None:
        """Back to the initial weights and a fresh optimizer (its slots zeroed in place: a replay reads them)."""
        for variable, initial in zip(self.params, self.problem.weights, strict=True):
            variable.assign(initial.copy())
        self.optimizer.load_state(self.fresh)

    def loss(self) -> tp.Tensor:
        w1, b1, w2, b2, w3, b3 = self.params
        h = tp.max_pool(tp.relu(tp.conv2d(self.x, w1, pad="same") + b1), 2)
        h = tp.max_pool(tp.relu(tp.conv2d(h, w2, pad="same") + b2), 2)
        logits = tp.matmul(tp.reshape(h, (BATCH, -1)), w3) + b3
        return tp.losses.softmax_cross_entropy(self.onehot, logits)

    def eager_step(self) -> tp.Tensor:
        return self.optimizer.minimize(self.loss, self.params)

    def step(self) -> tp.Tensor:
        loss: tp.Tensor = self.take_step()
        return loss

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = float(self.step().item())
        return loss, [p.numpy() for p in self.params]


# -- NumPy by hand ---------------------------------------------------------------------------------------------------


def _columns(x: np.ndarray) -> np.ndarray:
    """The 3x3 windows of NHWC ``x`` padded by one ("same"), as im2col rows [n*h*w, 9*c] in (fh, fw, c) order."""
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    windows = sliding_window_view(padded, (3, 3), axis=(1, 2))  # [n, h, w, c, 3, 3]
    return windows.transpose(0, 1, 2, 4, 5, 3).reshape(n * h * w, 9 * c)


def _add_columns(columns: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The transpose of ``_columns``: each window's [9*c] row added back into an NHWC input of ``shape``."""
    n, h, w, c = shape
    taps = columns.reshape(n, h, w, 3, 3, c)
    padded = np.zeros((n, h + 2, w + 2, c), dtype=columns.dtype)
    for i in range(3):
        for j in range(3):
            padded[:, i : i + h, j : j + w] += taps[:, :, :, i, j]
    return padded[:, 1:-1, 1:-1]


def _pool(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 max pooling of NHWC ``x``: the result and, per window, the index of its first maximum (row-major)."""
    n, h, w, c = x.shape
    windows = x.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4).reshape(n, h // 2, w // 2, c, 4)
    first = windows.argmax(axis=4)
    return np.take_along_axis(windows, first[..., None], axis=4)[..., 0], first


def _unpool(dy: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The gradient of ``_pool``: each window's ``dy`` to its first maximum."""
    n, oh, ow, c = dy.shape
    taps = np.where(first[..., None] == np.arange(4), dy[..., None], np.float32(0))  # [n, oh, ow, c, 4]
    return taps.reshape(n, oh, ow, c, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(n, 2 * oh, 2 * ow, c)


class NumpyCNN:
    """The step written by hand in NumPy: im2col convolutions, reshaped pooling, Adam in place."""

    def __init__(self, problem: CNNProblem) -> None:
        self.problem = problem
        self.params: list[np.ndarray] = []
        self.slots: list[tuple[np.ndarray, np.ndarray]] = []
        self.iterations = 0
        self.reset()

    def reset(self) -> None:
        """Back to the initial weights and a fresh optimizer."""
        self.params = [p.copy() for p in self.problem.weights]
        self.slots = [(np.zeros_like(p), np.zeros_like(p)) for p in self.params]
        self.iterations = 0

    def step(self) -> float:
        w1, b1, w2, b2, w3, b3 = self.params
        x, onehot = self.problem.x, self.problem.onehot
        # forward
        cols1 = _columns(x)
        z1 = (cols1 @ w1.reshape(-1, w1.shape[3])).reshape(BATCH, 8, 8, -1) + b1
        p1, first1 = _pool(np.maximum(z1, 0))
        cols2 = _columns(p1)
        z2 = (cols2 @ w2.reshape(-1, w2.shape[3])).reshape(BATCH, 4, 4, -1) + b2
        p2, first2 = _pool(np.maximum(z2, 0))
        flat = p2.reshape(BATCH, -1)
        logits = flat @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -(log_probs * onehot).sum() / BATCH
        # backward
        dlogits = (np.exp(log_probs) - onehot) / np.float32(BATCH)
        dw3, db3 = flat.T @ dlogits, dlogits.sum(axis=0)
        dz2 = _unpool((dlogits @ w3.T).reshape(p2.shape), first2) * (z2 > 0)
        dz2_rows = dz2.reshape(-1, dz2.shape[3])
        dw2, db2 = (cols2.T @ dz2_rows).reshape(w2.shape), dz2_rows.sum(axis=0)
        dp1 = _add_columns(dz2_rows @ w2.reshape(-1, w2.shape[3]).T, p1.shape)
        dz1 = _unpool(dp1, first1) * (z1 > 0)
        dz1_rows = dz1.reshape(-1, dz1.shape[3])
        dw1, db1 = (cols1.T @ dz1_rows).reshape(w1.shape), dz1_rows.sum(axis=0)
        self.update([dw1, db1, dw2, db2, dw3, db3])
        return float(loss)

    def update(self, grads: list[np.ndarray]) -> None:
        """Adam, in place."""
        self.iterations += 1
        (beta1, beta2), t = BETAS, self.iterations
        step_size = np.float32(LEARNING_RATE / (1 - beta1**t))
        root_correction2 = np.float32(np.sqrt(1 - beta2**t))
        for p, g, (m, v) in zip(self.params, grads, self.slots, strict=True):
            m *= np.float32(beta1)
            m += np.float32(1 - beta1) * g
            v *= np.float32(beta2)
            v += np.float32(1 - beta2) * g * g
            p -= step_size * m / (np.sqrt(v) / root_correction2 + np.float32(EPSILON))

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = self.step()
        return loss, [p.copy() for p in self.params]


# -- raw PyTorch eager -----------------------------------------------------------------------------------------------


class RawTorchCNN:
    """The step in plain PyTorch eager mode, NCHW: ``F.conv2d``, ``F.max_pool2d``, ``F.cross_entropy``, autograd,
    ``torch.optim.Adam``."""

    def __init__(self, problem: CNNProblem, device: str) -> None:
        import torch

        self.torch = torch
        self.problem = problem
        self.device = device
        self.x = torch.from_numpy(problem.x.transpose(0, 3, 1, 2).copy()).to(device)
        self.labels = torch.from_numpy(problem.onehot.argmax(axis=1)).to(device)
        self.params: list[Any] = []
        self.optimizer: Any = None
        self.reset()

    def reset(self) -> None:
        """Back to the initial weights (filters as [out, in, fh, fw], dense rows in NCHW order), a fresh Adam."""
        torch = self.torch
        w1, b1, w2, b2, w3, b3 = self.problem.weights
        channels = w3.shape[0] // 4
        dense = w3.reshape(2, 2, channels, CLASSES).transpose(2, 0, 1, 3).reshape(-1, CLASSES)
        weights = [w1.transpose(3, 2, 0, 1), b1, w2.transpose(3, 2, 0, 1), b2, dense, b3]
        self.params = [torch.from_numpy(w.copy()).to(self.device).requires_grad_(True) for w in weights]
        self.optimizer = torch.optim.Adam(self.params, lr=LEARNING_RATE, betas=BETAS, eps=EPSILON)

    def step(self) -> Any:
        functional = self.torch.nn.functional
        w1, b1, w2, b2, w3, b3 = self.params
        h = functional.max_pool2d(functional.relu(functional.conv2d(self.x, w1, b1, padding=1)), 2)
        h = functional.max_pool2d(functional.relu(functional.conv2d(h, w2, b2, padding=1)), 2)
        logits = h.flatten(1) @ w3 + b3
        loss = functional.cross_entropy(logits, self.labels)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        return loss

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        """One step's loss and the updated weights, in tensorplug's layout."""
        self.reset()
        loss = float(self.step().detach())
        w1, b1, w2, b2, w3, b3 = (p.detach().cpu().numpy() for p in self.params)
        channels = w3.shape[0] // 4
        dense = w3.reshape(channels, 2, 2, CLASSES).transpose(1, 2, 0, 3).reshape(-1, CLASSES)
        return loss, [w1.transpose(2, 3, 1, 0), b1, w2.transpose(2, 3, 1, 0), b2, dense, b3]
