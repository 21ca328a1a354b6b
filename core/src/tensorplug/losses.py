"""Losses, as TensorFlow.js's ``tf.losses``: per-example losses reduced with optional weights.

``reduction`` is one of ``"none"``, ``"sum"``, ``"mean"`` and
``"sum_by_nonzero_weights"`` (the default, as in TensorFlow.js).
"""

from __future__ import annotations

from typing import Any, Literal

from tensorplug._autodiff import custom_grad
from tensorplug._errors import ShapeError, TensorplugError
from tensorplug._tensor import Tensor, describe
from tensorplug.ops import (
    add,
    as_tensor,
    cast,
    div,
    exp,
    log_softmax,
    mean,
    mul,
    neg,
    not_equal,
    ones_like,
    reshape,
    sub,
    sum,
)
from tensorplug.ops._convert import check_float

__all__ = ["Reduction", "compute_weighted_loss", "softmax_cross_entropy"]

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


def _softmax_cross_entropy_with_logits(labels: Tensor, logits: Tensor) -> Tensor:
    """-sum(labels * log_softmax(logits), -1), with the fused gradient softmax(logits) - labels."""

    @custom_grad
    def fused(labels: Tensor, logits: Tensor) -> tuple[Tensor, Any]:
        log_probs = log_softmax(logits, -1)
        value = sum(neg(mul(log_probs, labels)), -1)

        def grad_fn(dy: Tensor) -> tuple[Tensor, Tensor]:
            dy = reshape(dy, (*dy.shape, 1))
            d_labels = mul(dy, neg(log_probs))
            # softmax - labels for rows of labels that sum to 1; exact for any labels
            d_logits = mul(dy, sub(mul(exp(log_probs), sum(labels, -1, keepdims=True)), labels))
            return d_labels, d_logits

        return value, grad_fn

    result: Tensor = fused(labels, logits)
    return result


def softmax_cross_entropy(
    onehot_labels: Any,
    logits: Any,
    weights: Any = None,
    label_smoothing: float = 0.0,
    reduction: Reduction = "sum_by_nonzero_weights",
) -> Tensor:
    """Softmax cross-entropy between one-hot ``onehot_labels`` and ``logits`` (last axis = classes).

    The per-example loss and its gradient are computed in one fused,
    numerically stable step through :func:`tensorplug.custom_grad`.
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
