"""The demo's plot says what its loss is: the softmax cross-entropy with label smoothing 0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensorplug._tools import _demo


def test_the_loss_axis_names_the_label_smoothing(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    result = _demo.Result(
        "numpy", "cpu", 1438, 359, [_demo.Epoch(1, 0.9, 0.8, 0.85, 1e4), _demo.Epoch(2, 0.6, 0.9, 0.9, 1e4)]
    )
    target = tmp_path / "curves.svg"
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # text as text, not as paths
        _demo.plot(result, target, 0.1)
    assert "softmax cross-entropy with label smoothing 0.1" in target.read_text(encoding="utf-8")
