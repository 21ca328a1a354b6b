"""Losses, as TensorFlow.js's ``tf.losses``: per-example losses reduced with optional weights.

``reduction`` is one of ``"none"``, ``"sum"``, ``"mean"`` and
``"sum_by_nonzero_weights"`` (the default, as in TensorFlow.js).
"""

from __future__ import annotations

from typing import Any, Literal

from tensorplug._runtime._errors import ShapeError, TensorplugError
from tensorplug._runtime._registry import BUILTIN, GradientSpec
from tensorplug._runtime._state import no_grad
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug.ops import (
    abs,
    add,
    as_tensor,
    cast,
    div,
    exp,
    log,
    log1p,
    log_softmax,
    mean,
    minimum,
    mul,
    neg,
    not_equal,
    ones_like,
    relu,
    reshape,
    squared_difference,
    sub,
    sum,
)
from tensorplug.ops._args import check_float
from tensorplug.ops._record import record_gradient

__all__ = [
    "Reduction",
    "absolute_difference",
    "compute_weighted_loss",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
]

Reduction = Literal["none", "sum", "mean", "sum_by_nonzero_weights"]
_REDUCTIONS = ("none", "sum", "mean", "sum_by_nonzero_weights")


def compute_weighted_loss(
    losses: Tensor, weights: Any = None, reduction: Reduction = "sum_by_nonzero_weights"
) -> Tensor:
    """Weight per-example ``losses`` and reduce them, as TensorFlow.js's ``computeWeightedLoss``."""
    if reduction not in _REDUCTIONS:
        raise TensorplugError(f"losses: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    weighted = losses if weights is None else mul(losses, weights)
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return sum(weighted)
    if reduction == "mean":
        if weights is None:
            return mean(weighted)
        w = as_tensor(weights, losses.dtype)
        result = div(sum(weighted), sum(w))
        factor = losses.size // max(w.size, 1)
        return div(result, float(factor)) if factor > 1 else result
    if weights is None:
        return div(sum(weighted), float(max(losses.size, 1)))
    nonzero = cast(sum(not_equal(mul(as_tensor(weights, losses.dtype), ones_like(losses)), 0.0)), losses.dtype)
    return div(sum(weighted), nonzero)


def _softmax_cross_entropy_gradient(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any, ...]:
    """The fused gradient: dy * -log_softmax(logits) for the labels, dy * (softmax(logits) - labels) for the
    logits (for rows of labels that sum to 1; exact for any labels), none for the log-probabilities it saves.
    Lazy entries: computed only for the inputs that need a gradient (labels rarely do)."""
    labels, log_probs = saved
    dy = reshape(dy, (*dy.shape, 1))
    return (
        lambda: mul(dy, neg(log_probs)),
        lambda: mul(dy, sub(mul(exp(log_probs), sum(labels, -1, keepdims=True)), labels)),
        None,
    )


_SOFTMAX_CROSS_ENTROPY = GradientSpec(
    "SoftmaxCrossEntropyWithLogits",
    _softmax_cross_entropy_gradient,
    inputs_to_save=("labels", "log_probs"),
    source=BUILTIN,
    replay=True,
)
"""A record of its own, as ``tp.custom_grad`` makes one, but with a gradient of what it saves (not a closure), so
that backprop replays it as it does a kernel's."""


def _softmax_cross_entropy_with_logits(labels: Tensor, logits: Tensor) -> Tensor:
    """-sum(labels * log_softmax(logits), -1), with the fused gradient softmax(logits) - labels."""
    log_probs = log_softmax(logits, -1)  # recorded when watched: higher orders differentiate the fused gradient
    with no_grad():  # the record below gives its gradient, at every order: its ops' records would go unread
        value = sum(neg(mul(log_probs, labels)), -1)
    return record_gradient(_SOFTMAX_CROSS_ENTROPY, {"labels": labels, "logits": logits, "log_probs": log_probs}, value)


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = None,
    label_smoothing: float = 0.0,
    reduction: Reduction = "sum_by_nonzero_weights",
) -> Tensor:
    """Softmax cross-entropy between one-hot ``onehot_labels`` and ``logits`` (last axis = classes).

    The per-example loss and its gradient are computed in one fused,
    numerically stable step (the gradient is softmax(logits) - labels).
    ``label_smoothing`` mixes the labels with the uniform distribution.

    >>> import tensorplug as tp
    >>> loss = tp.losses.softmax_cross_entropy(tp.tensor([[0.0, 1.0]]), tp.tensor([[0.0, 0.0]]))
    >>> round(loss.item(), 4)
    0.6931
    """
    logits = as_tensor(logits)
    check_float("softmax_cross_entropy", logits)
    labels = cast(as_tensor(onehot_labels), logits.dtype)
    if labels.shape != logits.shape:
        raise ShapeError(
            f"softmax_cross_entropy: onehot_labels {describe(labels)} and logits {describe(logits)} "
            "must have the same shape"
        )
    if label_smoothing:
        classes = logits.shape[-1]
        labels = add(mul(labels, 1.0 - label_smoothing), label_smoothing / classes)
    losses = _softmax_cross_entropy_with_logits(labels, logits)
    return compute_weighted_loss(losses, weights, reduction)


def _pair(op: str, labels: Any, predictions: Any) -> tuple[Tensor, Tensor]:
    """Labels and predictions as float tensors of one dtype and one shape."""
    predictions = as_tensor(predictions)
    check_float(op, predictions)
    labels = cast(as_tensor(labels), predictions.dtype)
    if labels.shape != predictions.shape:
        raise ShapeError(
            f"{op}: labels {describe(labels)} and predictions {describe(predictions)} must have the same shape"
        )
    return labels, predictions


def absolute_difference(
    labels: Any, predictions: Any, weights: Any = None, reduction: Reduction = "sum_by_nonzero_weights"
) -> Tensor:
    """|labels - predictions|, weighted and reduced.

    >>> import tensorplug as tp
    >>> tp.losses.absolute_difference(tp.tensor([1.0, 2.0]), tp.tensor([1.5, 1.0])).item()
    0.75
    """
    labels, predictions = _pair("absolute_difference", labels, predictions)
    return compute_weighted_loss(abs(sub(labels, predictions)), weights, reduction)


def mean_squared_error(
    labels: Any, predictions: Any, weights: Any = None, reduction: Reduction = "sum_by_nonzero_weights"
) -> Tensor:
    """(labels - predictions)**2, weighted and reduced.

    >>> import tensorplug as tp
    >>> tp.losses.mean_squared_error(tp.tensor([1.0, 2.0]), tp.tensor([1.5, 1.0])).item()
    0.625
    """
    labels, predictions = _pair("mean_squared_error", labels, predictions)
    return compute_weighted_loss(squared_difference(labels, predictions), weights, reduction)


def hinge_loss(
    labels: Any, predictions: Any, weights: Any = None, reduction: Reduction = "sum_by_nonzero_weights"
) -> Tensor:
    """max(0, 1 - y * predictions) with labels in {0, 1} mapped to y in {-1, 1}, as TensorFlow.js."""
    labels, predictions = _pair("hinge_loss", labels, predictions)
    signs = sub(mul(labels, 2.0), 1.0)
    return compute_weighted_loss(relu(sub(1.0, mul(signs, predictions))), weights, reduction)


def huber_loss(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    delta: float = 1.0,
    reduction: Reduction = "sum_by_nonzero_weights",
) -> Tensor:
    """Quadratic for errors up to ``delta``, linear beyond: 0.5 * q**2 + delta * (|e| - q), q = min(|e|, delta)."""
    labels, predictions = _pair("huber_loss", labels, predictions)
    if delta <= 0:
        raise TensorplugError(f"huber_loss: delta must be positive, got {delta!r}")
    error = abs(sub(predictions, labels))
    quadratic = minimum(error, delta)
    linear = sub(error, quadratic)
    return compute_weighted_loss(add(mul(mul(quadratic, quadratic), 0.5), mul(linear, delta)), weights, reduction)


def log_loss(
    labels: Any,
    predictions: Any,
    weights: Any = None,
    epsilon: float = 1e-7,
    reduction: Reduction = "sum_by_nonzero_weights",
) -> Tensor:
    """-labels * log(p + eps) - (1 - labels) * log(1 - p + eps), for probabilities p, as TensorFlow.js."""
    labels, predictions = _pair("log_loss", labels, predictions)
    positive = mul(labels, log(add(predictions, epsilon)))
    negative = mul(sub(1.0, labels), log(add(sub(1.0, predictions), epsilon)))
    return compute_weighted_loss(neg(add(positive, negative)), weights, reduction)


def sigmoid_cross_entropy(
    multi_class_labels: Any,
    logits: Any,
    weights: Any = None,
    label_smoothing: float = 0.0,
    reduction: Reduction = "sum_by_nonzero_weights",
) -> Tensor:
    """Sigmoid cross-entropy from logits, computed stably: max(x, 0) - x * z + log(1 + exp(-|x|)).

    ``label_smoothing`` moves the labels towards 1/2: z * (1 - s) + s / 2.

    >>> import tensorplug as tp
    >>> round(tp.losses.sigmoid_cross_entropy(tp.tensor([1.0]), tp.tensor([0.0])).item(), 4)
    0.6931
    """
    labels, logits = _pair("sigmoid_cross_entropy", multi_class_labels, logits)
    if label_smoothing:
        labels = add(mul(labels, 1.0 - label_smoothing), 0.5 * label_smoothing)
    losses = add(sub(relu(logits), mul(logits, labels)), log1p(exp(neg(abs(logits)))))
    return compute_weighted_loss(losses, weights, reduction)
