"""Train a small multilayer perceptron with tensorplug: the project's "main job" for now.

The network classifies points of the plane into three classes laid out as
interleaved spirals (a classic toy problem that a linear model cannot solve):

    2 inputs -> 32 hidden units (tanh) -> 3 class scores (logits)

Training is plain full-batch gradient descent:

1. compute the softmax cross-entropy loss of the whole data set,
2. ask ``tp.variable_grads`` for the gradient of that loss with respect to
   every weight,
3. move each weight a small step against its gradient with ``Variable.assign``.

Run it from the repository root::

    python examples/train_mlp.py               # NumPy backend
    python examples/train_mlp.py --epochs 500  # train longer

It prints the loss every few epochs and the final training accuracy, and
exits with status 1 if the loss did not fall (so it doubles as a smoke test).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import tensorplug as tp


def make_spirals(points_per_class: int, classes: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Points on ``classes`` interleaved spiral arms, with a little noise. Returns (inputs, labels)."""
    rng = np.random.default_rng(seed)
    inputs, labels = [], []
    for label in range(classes):
        radius = np.linspace(0.0, 1.0, points_per_class)
        # each arm starts at a different angle and winds around the centre
        angle = np.linspace(label * 4.0, (label + 1) * 4.0, points_per_class)
        angle += rng.normal(scale=0.2, size=points_per_class)
        inputs.append(np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1))
        labels.append(np.full(points_per_class, label))
    return np.concatenate(inputs).astype(np.float32), np.concatenate(labels)


def one_hot(labels: np.ndarray, classes: int) -> np.ndarray:
    """Class indices as rows of zeros with a single 1 (what softmax_cross_entropy expects)."""
    return np.eye(classes, dtype=np.float32)[labels]


class MLP:
    """The model: its weights are tensorplug Variables, so tp.variable_grads can find them."""

    def __init__(self, inputs: int, hidden: int, classes: int, seed: int) -> None:
        # Random weights break the symmetry between hidden units; biases start at zero. With two inputs, He's
        # scale (std sqrt(2 / fan_in) = 1) gives the tanh units curves steep enough for the spirals; the output
        # layer takes Glorot's (tp.initializers has the usual ones: docs/initializers.md).
        init = tp.initializers
        self.w1 = tp.variable(init.he_normal((inputs, hidden), seed=seed), name="w1")
        self.b1 = tp.variable(init.zeros((hidden,)), name="b1")
        self.w2 = tp.variable(init.glorot_uniform((hidden, classes), seed=seed + 1), name="w2")
        self.b2 = tp.variable(init.zeros((classes,)), name="b2")
        self.variables = [self.w1, self.b1, self.w2, self.b2]

    def __call__(self, x: tp.Tensor) -> tp.Tensor:
        """The forward pass: logits (unnormalised class scores) for a batch of points."""
        hidden = tp.tanh(tp.matmul(x, self.w1) + self.b1)
        return tp.matmul(hidden, self.w2) + self.b2


def accuracy(model: MLP, x: tp.Tensor, labels: np.ndarray) -> float:
    """The fraction of points whose highest-scoring class is the right one."""
    with tp.no_grad():  # no gradient is needed here, so nothing is recorded
        logits = model(x).numpy()
    return float(np.mean(logits.argmax(axis=1) == labels))


def train(epochs: int, learning_rate: float, log_every: int, seed: int) -> tuple[float, float, float]:
    """Train on the spirals; returns (first loss, last loss, final accuracy)."""
    points, labels = make_spirals(points_per_class=100, classes=3, seed=seed)
    x = tp.tensor(points)  # 300 x 2
    y = tp.tensor(one_hot(labels, 3))  # 300 x 3
    model = MLP(inputs=2, hidden=32, classes=3, seed=seed)

    def loss_fn() -> tp.Tensor:
        # mean softmax cross-entropy over the data set (a scalar)
        return tp.losses.softmax_cross_entropy(y, model(x))

    first_loss = last_loss = float("nan")
    for epoch in range(epochs + 1):
        # One step: the loss and its gradient with respect to each variable, by name ...
        loss, grads = tp.variable_grads(loss_fn, model.variables)
        last_loss = loss.item()
        if epoch == 0:
            first_loss = last_loss
        if epoch % log_every == 0 or epoch == epochs:
            print(f"epoch {epoch:4d}  loss {last_loss:.4f}")
        if epoch == epochs:
            break  # the last pass only measures the loss of the trained model
        # ... then plain SGD: w <- w - learning_rate * dloss/dw
        for v in model.variables:
            v.assign(v - learning_rate * grads[v.name])
    return first_loss, last_loss, accuracy(model, x, labels)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Train a small MLP on three interleaved spirals.")
    parser.add_argument("--backend", default="numpy", help="tensorplug backend to use (default: numpy)")
    parser.add_argument("--epochs", type=int, default=300, help="full-batch gradient steps (default: 300)")
    parser.add_argument("--learning-rate", type=float, default=1.0, help="SGD step size (default: 1.0)")
    parser.add_argument("--log-every", type=int, default=25, help="print the loss every N epochs (default: 25)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the data and the initial weights")
    args = parser.parse_args(argv)

    tp.set_backend(args.backend)
    print(f"training a 2-32-3 MLP on 300 spiral points, backend {tp.get_backend()!r}")
    first_loss, last_loss, train_accuracy = train(args.epochs, args.learning_rate, args.log_every, args.seed)
    print(f"final training accuracy: {train_accuracy:.1%}")

    if not last_loss < first_loss:
        print(f"error: the loss did not fall ({first_loss:.4f} -> {last_loss:.4f})", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
