"""A small convolutional network trains on the numpy backend: the loss falls.

conv2d (3x3, 4 filters, "same") -> relu -> max_pool (2x2) -> reshape -> dense -> softmax cross-entropy,
trained by plain SGD through tp.variable_grads on noisy 8x8 images of a horizontal or a vertical bar.
"""

from __future__ import annotations

import time

import numpy as np

import tensorplug as tp


def bars(count: int, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Images [count, size, size, 1] with one bright row (class 0) or column (class 1) at a random place."""
    images = rng.normal(scale=0.3, size=(count, size, size, 1)).astype(np.float32)
    labels = np.arange(count) % 2
    for i, label in enumerate(labels):
        line = rng.integers(size)
        if label == 0:
            images[i, line, :, 0] += 1.0
        else:
            images[i, :, line, 0] += 1.0
    return images, labels


def test_cnn_trains_on_bars() -> None:
    rng = np.random.default_rng(0)
    images, labels = bars(32, 8, rng)
    x = tp.tensor(images)
    onehot = tp.tensor(np.eye(2, dtype=np.float32)[labels])
    kernels = tp.variable(rng.normal(scale=0.5, size=(3, 3, 1, 4)).astype(np.float32), name="cnn_kernels")
    conv_bias = tp.variable(np.zeros(4, np.float32), name="cnn_conv_bias")
    weights = tp.variable(rng.normal(scale=0.1, size=(4 * 4 * 4, 2)).astype(np.float32), name="cnn_weights")
    bias = tp.variable(np.zeros(2, np.float32), name="cnn_bias")
    params = [kernels, conv_bias, weights, bias]

    def loss() -> tp.Tensor:
        features = tp.relu(tp.conv2d(x, kernels, pad="same") + conv_bias)  # [32, 8, 8, 4]
        pooled = tp.max_pool(features, 2)  # [32, 4, 4, 4]
        logits = tp.matmul(tp.reshape(pooled, (32, -1)), weights) + bias
        return tp.losses.softmax_cross_entropy(onehot, logits)

    start = time.perf_counter()
    losses = []
    for _ in range(40):
        value, grads = tp.variable_grads(loss, params)
        losses.append(value.item())
        for p in params:
            p.assign(p - grads[p.name] * 0.5)
    elapsed = time.perf_counter() - start

    assert all(np.isfinite(losses))
    assert losses[-1] < 0.25 * losses[0], losses
    assert elapsed < 10.0
