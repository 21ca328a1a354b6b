"""The digits demo's classifier exported to ONNX: ONNX Runtime predicts what tensorplug predicts.

In this process: the demo trains, its classifier is exported (``--export`` does the same), and ONNX Runtime's
predictions equal tensorplug's on every held-out digit, its scores within float32 rounding, whatever the batch
size. Then the command as a user runs it: ``tensorplug demo --export FILE.onnx``, whose model scores the
held-out accuracy the demo printed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

import tensorplug as tp
from tensorplug._tools._demo import Settings, train
from tensorplug._tools._demo_export import export_classifier, held_out, predictor

HELD_OUT = re.compile(r"^held-out accuracy: (\d+\.\d)% on (\d+) digits never trained on", re.MULTILINE)


def test_onnx_runtime_predicts_what_tensorplug_predicts_on_the_whole_held_out_set(tmp_path: Path) -> None:
    tp.set_backend("numpy")
    settings = Settings(epochs=5)
    result = train(settings)
    assert result.model is not None
    path = tmp_path / "digits.onnx"
    line = export_classifier(result.model, settings, path)
    assert line.startswith(f"exported the classifier to {path} (ONNX)")
    pixels, labels = held_out(settings)
    ours = predictor(result.model)(tp.tensor(pixels))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    logits, label = session.run(["logits", "label"], {"pixels": pixels})
    agree = int(np.sum(label == ours["label"].numpy()))
    print(f"ONNX Runtime and tensorplug agree on {agree}/{len(labels)} held-out digits")
    assert agree == len(labels) == 359
    np.testing.assert_allclose(logits, ours["logits"].numpy(), rtol=1e-4, atol=1e-5)
    accuracy = float(np.mean(label == labels))
    assert abs(accuracy - result.held_out_accuracy) < 1e-9
    for batch in (1, 7):  # the batch size is open
        (few,) = session.run(["label"], {"pixels": pixels[:batch]})
        assert few.tolist() == label[:batch].tolist()


def test_the_demo_command_exports_a_model_that_scores_what_it_printed(tmp_path: Path) -> None:
    script = shutil.which("tensorplug", path=str(Path(sys.executable).parent))
    assert script, f"the tensorplug console script is not installed beside {sys.executable}"
    path = tmp_path / "model.onnx"
    done = subprocess.run(
        [script, "demo", "--backend", "numpy", "--epochs", "4", "--export", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"exported the classifier to {path} (ONNX): input pixels float32[batch, 64]" in done.stdout
    printed = HELD_OUT.search(done.stdout)
    assert printed, done.stdout
    pixels, labels = held_out(Settings())
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (label,) = session.run(["label"], {"pixels": pixels})
    assert f"{100 * np.mean(label == labels):.1f}" == printed.group(1)
