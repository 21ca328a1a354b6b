"""``tensorplug demo --export FILE.onnx``: the trained digits classifier as an ONNX model.

The exported function is the classifier's inference: a batch of 64-pixel images (float32, scaled to [0, 1]
as in training) in, ``logits`` (float32, one score per class) and ``label`` (int32, the class with the
highest score) out, with the trained weights inside; the batch size is left open (``dynamic_axes``), so any
batch runs. ONNX Runtime, or any other ONNX runtime, runs it without tensorplug.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug._runtime._install import pip_install
from tensorplug._tools._demo_model import MLP, Settings, split

DISTRIBUTION = "tensorplug-onnx"


def exporter_missing() -> str | None:
    """None when the ONNX exporter is installed, else what to install."""
    if any(spec.format == "onnx" for spec in tp.exporters()):
        return None
    return f"--export needs the ONNX exporter: {pip_install(DISTRIBUTION)}"


def predictor(model: MLP) -> Callable[[tp.Tensor], dict[str, tp.Tensor]]:
    """The classifier's inference function: pixels -> {"logits", "label"}."""

    def classify(pixels: tp.Tensor) -> dict[str, tp.Tensor]:
        logits = model(pixels)
        return {"logits": logits, "label": tp.argmax(logits, axis=1)}

    return classify


def held_out(settings: Settings) -> tuple[np.ndarray, np.ndarray]:
    """The held-out images (float32, scaled as in training) and labels of the demo's split."""
    images, labels = tp.datasets.load_digits()
    _, test_rows = split(labels, settings.held_out, settings.seed)
    return (images[test_rows] / 16.0).astype(np.float32), labels[test_rows].astype(np.int32)


def export_classifier(model: MLP, settings: Settings, path: Path, **options: Any) -> str:
    """Write the classifier to ``path`` as ONNX; return the line the demo prints."""
    pixels, _ = held_out(settings)
    tp.export(
        predictor(model),
        tp.tensor(pixels),
        format="onnx",
        path=path,
        input_names=["pixels"],
        dynamic_axes={"pixels": {0: "batch"}},
        **options,
    )
    return (
        f"exported the classifier to {path} (ONNX): input pixels float32[batch, {pixels.shape[1]}], outputs logits "
        f"float32[batch, 10] and label int32[batch]"
    )
