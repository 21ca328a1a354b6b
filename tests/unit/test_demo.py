"""The pieces of ``tensorplug demo``: the data, the split, the progress display, a short run, argument errors.

The full runs (held-out accuracy above 95 % on numpy and torch, the plot)
are in tests/demo (nox -s demo).
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np

import tensorplug as tp
from tensorplug._tools import _demo


def test_digits_are_the_uci_test_set() -> None:
    images, labels = tp.datasets.load_digits()
    assert images.shape == (1797, 64)
    assert images.dtype == np.float32
    assert (images.min(), images.max()) == (0.0, 16.0)
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    # the first digit is a 0: a ring of ink around an empty centre
    first = images[0].reshape(8, 8)
    assert labels[0] == 0
    assert first[3:5, 3:5].sum() == 0
    assert first[1, 2:6].min() > 0


def test_split_is_stratified_disjoint_and_complete() -> None:
    labels = tp.datasets.load_digits().labels
    train, test = _demo.split(labels, 0.2, seed=3)
    assert len(train) + len(test) == len(labels)
    assert not set(train.tolist()) & set(test.tolist())
    per_class = np.bincount(labels)
    assert np.abs(np.bincount(labels[test]) - 0.2 * per_class).max() <= 0.5
    again, _ = _demo.split(labels, 0.2, seed=3)
    assert np.array_equal(train, again)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_short_run_prints_one_line_per_epoch_and_learns() -> None:
    out = io.StringIO()
    result = _demo.train(_demo.Settings(epochs=2, hidden=32), out=out)
    lines = out.getvalue().splitlines()
    assert [line.split("[")[0].strip() for line in lines] == ["epoch 1/2", "epoch 2/2"]
    assert "\r" not in out.getvalue()  # not a terminal: no redrawing
    assert len(result.epochs) == 2
    assert result.epochs[1].loss < result.epochs[0].loss
    assert result.held_out_accuracy > 0.6  # ten classes: chance is 0.1
    assert (result.train_examples, result.held_out_examples) == (1438, 359)


def test_the_traced_steps_train_to_the_eager_figures_bit_for_bit() -> None:
    traced = _demo.train(_demo.Settings(epochs=2, hidden=32))
    eager = _demo.train(_demo.Settings(epochs=2, hidden=32, eager=True))
    figures = [[(e.loss, e.accuracy, e.held_out_accuracy) for e in r.epochs] for r in (traced, eager)]
    assert figures[0] == figures[1]


def test_on_a_terminal_the_bar_is_redrawn_in_place() -> None:
    out = Terminal()
    progress = _demo.Progress(epochs=3, out=out)
    progress.update(1, 0.5, 0.75, 0.5, 1234.0)
    progress.finish(_demo.Epoch(1, 0.5, 0.75, 0.8, 1500.0))
    text = out.getvalue()
    assert text.startswith("\repoch 1/3 [############............] loss 0.7500")
    assert text.endswith("held-out  80.0%\n")
    assert "1,500 examples/s" in text


def test_unknown_backend_is_a_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "demo", "--backend", "nope"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "tensorplug demo: error: set_backend('nope')" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_arguments_are_refused_by_the_parser() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "demo", "--epochs", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "must be at least 1" in done.stderr


# -- --save and --resume ----------------------------------------------------------------------------------------------


def figures(result: _demo.Result) -> list[tuple[int, float, float, float]]:
    return [(e.epoch, e.loss, e.accuracy, e.held_out_accuracy) for e in result.epochs]


def test_a_resumed_run_gives_the_figures_of_a_run_never_stopped(tmp_path: Path) -> None:
    path = tmp_path / "digits.safetensors"
    whole = _demo.train(_demo.Settings(epochs=3, hidden=32))
    first = _demo.train(_demo.Settings(epochs=2, hidden=32), save=path)
    assert tp.load(path).metadata["epochs"] == 2
    out = io.StringIO()
    rest = _demo.train(_demo.Settings(epochs=1, hidden=32), out=out, resume=path)
    assert figures(first) + figures(rest) == figures(whole)
    assert out.getvalue().startswith("epoch 3/3 [")


def test_save_writes_the_model_and_optimizer_after_each_epoch(tmp_path: Path) -> None:
    path = tmp_path / "digits.safetensors"
    _demo.train(_demo.Settings(epochs=1, hidden=16), save=path)
    checkpoint = tp.load(path)
    assert checkpoint.verified
    assert [n for n in checkpoint if n.startswith("model.")] == ["model.b1", "model.b2", "model.w1", "model.w2"]
    assert checkpoint["model.w1"].shape == (64, 16)
    assert checkpoint["optimizer.iterations"].item() == 45  # 1438 examples in batches of 32
    assert checkpoint.metadata == {
        "demo": "digits MLP",
        "epochs": 1,
        "hidden": 16,
        "batch_size": 32,
        "learning_rate": 0.005,
        "label_smoothing": 0.1,
        "held_out": 0.2,
        "seed": 0,
    }


def test_resume_on_the_command_line_takes_the_checkpoints_settings(tmp_path: Path) -> None:
    path = tmp_path / "digits.safetensors"
    command = [sys.executable, "-m", "tensorplug", "demo", "--epochs", "1"]
    first = subprocess.run(
        [*command, "--hidden", "16", "--save", str(path)], capture_output=True, text=True, timeout=120
    )
    assert first.returncode == 0, first.stderr
    assert "loss: softmax cross-entropy with label smoothing 0.1, " in first.stdout.splitlines()[0]
    assert first.stdout.endswith(f"saved the model and its optimizer to {path} (continue with --resume {path})\n")
    again = subprocess.run([*command, "--resume", str(path)], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"resuming from {path}: its model, data split, batch size and learning rate\n")
    assert "a 64-16-10 MLP" in again.stdout  # the checkpoint's size, not --hidden's default
    assert "\nepoch 2/2 [" in again.stdout


def test_resume_from_a_file_that_is_not_a_demo_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "other.safetensors"
    tp.save(path, {"w": tp.ones(2)})
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "demo", "--resume", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert f"tensorplug demo: error: --resume: '{path}' is not a checkpoint of tensorplug demo" in done.stderr
    assert "Traceback" not in done.stderr
    assert "epoch" not in done.stdout


def test_resume_refuses_a_flag_that_conflicts_with_the_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "digits.safetensors"
    command = [sys.executable, "-m", "tensorplug", "demo", "--epochs", "1"]
    first = subprocess.run(
        [*command, "--hidden", "16", "--save", str(path)], capture_output=True, text=True, timeout=120
    )
    assert first.returncode == 0, first.stderr
    written = path.read_bytes()
    again = subprocess.run(
        [*command, "--resume", str(path), "--hidden", "64", "--seed", "0"], capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 2
    assert f"tensorplug demo: error: --resume {path}: --hidden 64 (the checkpoint has 16): " in again.stderr
    assert "--seed" not in again.stderr  # the same value as the checkpoint's is no conflict
    assert "leave these flags out, or start a new run without --resume" in again.stderr
    assert "epoch" not in again.stdout
    assert path.read_bytes() == written


def test_demo_help_shows_the_defaults_and_the_label_smoothing() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "demo", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    text = " ".join(done.stdout.split())  # argparse wraps the lines
    assert "softmax cross-entropy with label smoothing 0.1" in text
    assert "passes over the training set (default: 20)" in text
    assert "examples per step (default: 32;" in text
    assert "hidden units (default: 128;" in text
    assert "Adam's step size (default: 0.005;" in text
    assert "seed of the split, the weights and shuffling (default: 0;" in text


def test_demo_help_says_how_to_install_the_onnx_exporter_from_a_checkout() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "demo", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert (
        "--export FILE.onnx save the trained classifier as an ONNX model (needs the ONNX exporter: pip install "
        "./plugins/export-onnx from a tensorplug checkout)" in text
    )
    assert "tensorplug-onnx" not in text  # not a name on any package index
