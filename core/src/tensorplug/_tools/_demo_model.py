"""The demo's model and data split: the settings of a run, the stratified split of the digits, and the MLP
(``tensorplug demo`` trains it; ``tensorplug demo --export`` exports it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import tensorplug as tp

__all__ = ["CLASSES", "MLP", "PIXELS", "Settings", "split"]

CLASSES = 10
PIXELS = 64


@dataclass(frozen=True)
class Settings:
    """What to train; the defaults finish in a few seconds on a 2-core CPU."""

    epochs: int = 20
    batch_size: int = 32
    hidden: int = 128
    learning_rate: float = 0.005
    label_smoothing: float = 0.1  # a little regularisation: about +1.5 points of held-out accuracy here
    held_out: float = 0.2
    seed: int = 0
    eager: bool = False  # True: every step op by op; False: the step traced once per batch shape by tp.function


def split(labels: np.ndarray, held_out: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of a stratified split: the same fraction of every class is held out."""
    rng = np.random.default_rng(seed)
    train, test = [], []
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        cut = round(len(members) * held_out)
        test.append(members[:cut])
        train.append(members[cut:])
    return rng.permutation(np.concatenate(train)), np.sort(np.concatenate(test))


class MLP:
    """64 -> hidden (ReLU) -> 10; He-initialised weights as Variables (drawn on the active backend), biases at zero."""

    def __init__(self, hidden: int, seed: int) -> None:
        init = tp.initializers
        self.w1 = tp.variable(init.he_normal((PIXELS, hidden), seed=seed), name="w1")  # std sqrt(2 / 64)
        self.b1 = tp.variable(init.zeros((hidden,)), name="b1")
        self.w2 = tp.variable(init.he_normal((hidden, CLASSES), seed=seed + 1), name="w2")  # std sqrt(2 / hidden)
        self.b2 = tp.variable(init.zeros((CLASSES,)), name="b2")
        self.variables = [self.w1, self.b1, self.w2, self.b2]

    def __call__(self, x: tp.Tensor) -> tp.Tensor:
        return tp.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2
