"""``tensorplug demo`` as a user runs it (nox -s demo: core[plot], numpy and torch installed).

Each test runs the installed console script with its defaults, as README's
first command does, and reads the held-out accuracy from its last line.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

HELD_OUT = re.compile(r"^held-out accuracy: (\d+\.\d)% on (\d+) digits never trained on", re.MULTILINE)
EPOCH_LINE = re.compile(
    r"^epoch +(\d+)/(\d+) \[#+\] loss (\d+\.\d+) +acc +(\d+\.\d)% +[\d,]+ examples/s +held-out", re.M
)


def demo(*args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    script = shutil.which("tensorplug", path=str(Path(sys.executable).parent))
    assert script, f"the tensorplug console script is not installed beside {sys.executable}"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    return subprocess.run([script, "demo", *args], capture_output=True, text=True, env=environ, timeout=timeout)


def held_out_accuracy(output: str) -> float:
    found = HELD_OUT.search(output)
    assert found, output
    assert int(found.group(2)) == 359  # 20 % of each class of the 1797 digits
    return float(found.group(1))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_default_run_beats_95_percent_held_out(backend: str) -> None:
    done = demo("--backend", backend)
    assert done.returncode == 0, done.stderr
    assert f"backend {backend!r}" in done.stdout
    epochs = EPOCH_LINE.findall(done.stdout)
    assert [int(e[0]) for e in epochs] == list(range(1, 21))  # one progress line per epoch (not a terminal)
    losses = [float(e[2]) for e in epochs]
    assert losses[-1] < losses[0] / 2
    assert held_out_accuracy(done.stdout) > 95.0


def test_plot_writes_a_png_of_both_curves(tmp_path: Path) -> None:
    target = tmp_path / "curves.png"
    done = demo("--epochs", "4", "--plot", str(target))
    assert done.returncode == 0, done.stderr
    data = target.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk
    assert (width, height) == (1000, 400)
    import matplotlib.image

    pixels = matplotlib.image.imread(target)[..., :3]
    colours = {tuple(int(255 * c + 0.5) for c in pixel) for pixel in pixels.reshape(-1, 3)[::7]}
    assert (31, 119, 180) in colours  # matplotlib's first line colour: the loss and training accuracy curves
    assert (255, 127, 14) in colours  # its second: the held-out accuracy curve


def test_plot_without_matplotlib_says_what_to_install_before_training(tmp_path: Path) -> None:
    target = tmp_path / "curves.png"
    code = "\n".join(
        [
            "import sys; sys.modules['matplotlib'] = None",
            "from tensorplug._tools._cli import main",
            "sys.exit(main(sys.argv[1:]))",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "demo", "--plot", str(target)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "pip install './core[plot]'" in done.stderr
    assert "epoch" not in done.stdout
    assert not target.exists()


def test_a_run_saved_and_resumed_ends_as_the_run_never_stopped(tmp_path: Path) -> None:
    checkpoint = tmp_path / "digits.safetensors"
    whole = demo("--backend", "numpy")
    first = demo("--backend", "numpy", "--epochs", "12", "--save", str(checkpoint))
    assert first.returncode == 0, first.stderr
    assert f"saved the model and its optimizer to {checkpoint}" in first.stdout
    rest = demo("--backend", "numpy", "--epochs", "8", "--resume", str(checkpoint))
    assert rest.returncode == 0, rest.stderr
    figures = [e[:1] + e[2:] for e in EPOCH_LINE.findall(whole.stdout)]  # all but the total: 20 and 12, 20
    assert [e[:1] + e[2:] for e in EPOCH_LINE.findall(first.stdout + rest.stdout)] == figures
    assert held_out_accuracy(rest.stdout) == held_out_accuracy(whole.stdout)


def test_a_run_saved_on_torch_goes_on_on_numpy(tmp_path: Path) -> None:
    checkpoint = tmp_path / "digits.safetensors"
    first = demo("--backend", "torch", "--epochs", "10", "--save", str(checkpoint))
    assert first.returncode == 0, first.stderr
    rest = demo("--backend", "numpy", "--epochs", "10", "--resume", str(checkpoint))
    assert rest.returncode == 0, rest.stderr
    assert [int(e[0]) for e in EPOCH_LINE.findall(rest.stdout)] == list(range(11, 21))
    assert held_out_accuracy(rest.stdout) > 95.0
