"""``tensorplug info`` with the fixture plugins installed: failures shown, shadowed kernels, a third-party backend.

What is installed here (nox -s plugins) is described in test_discovery.py;
the figures below come from the fixtures' own declarations.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from test_discovery import ABRUPT_PLUGINS, CONTRACT_PLUGINS, HOSTILE_PLUGINS

BROKEN = "tensorplug-fixture-broken"
CONFLICT = "tensorplug-fixture-conflict"
GOOD = "tensorplug-fixture-good"


def info(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")} | (env or {})
    command = [sys.executable, "-W", "ignore", "-m", "tensorplug", "info", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120)


def info_json(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    done = info("--json", *args, env=env)
    assert done.stdout, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, data


def test_failed_plugins_are_listed_with_their_error_and_the_exit_status_is_1() -> None:
    status, data = info_json()
    assert status == 1
    rows = {p["name"]: p for p in data["plugins"]}
    assert (rows["broken"]["status"], rows["broken"]["distribution"]) == ("failed", BROKEN)
    assert "raised" in rows["broken"]["error"]  # the import error, as the plugin loader phrased it
    assert rows["half"]["status"] == "failed"
    assert "GradientSpec" in rows["half"]["error"]
    assert [rows[name]["status"] for name in ("conflict", "good", "numpy")] == ["loaded"] * 3


def test_the_text_output_shows_every_failure_and_says_the_others_work() -> None:
    done = info("--brief")
    assert done.returncode == 1
    failed_lines = [line for line in done.stdout.splitlines() if " failed " in f" {line} " and BROKEN in line]
    assert len(failed_lines) == 5, done.stdout  # broken, half, hookraise, sneaky, typo
    assert "5 plugin(s) failed to load and were rolled back" in done.stdout


def test_a_rolled_back_plugin_leaves_nothing_in_the_matrix() -> None:
    _, data = info_json()
    backends = [b["name"] for b in data["backends"]]
    assert backends == ["numpy", "fixture"]  # "half" declared a backend too: rolled back
    providers = {p for row in data["kernels"] for p in row["backends"].values() if p}
    assert BROKEN not in providers


def test_third_party_backend_and_kernels_appear_with_their_distribution() -> None:
    _, data = info_json("--init")
    fixture = next(b for b in data["backends"] if b["name"] == "fixture")
    assert (fixture["priority"], fixture["source"], fixture["state"]) == (-10, GOOD, "initialised")
    rows = {row["kernel"]: row for row in data["kernels"]}
    assert rows["FixtureCube"]["backends"] == {"numpy": GOOD, "fixture": None}
    assert rows["FixtureCube"]["gradient"] == GOOD
    assert rows["Add"]["backends"]["fixture"] == GOOD
    assert rows["Add"]["backends"]["numpy"] == "tensorplug-numpy"  # numpy's distribution sorts after the conflict
    assert data["default_backend"] == {"name": "numpy", "reason": "the highest priority (1)"}


def test_allowlist_blocks_the_broken_ones_and_clears_the_exit_status() -> None:
    status, data = info_json(env={"TENSORPLUG_PLUGINS": "good,numpy"})
    assert status == 0
    rows = {p["name"]: p["status"] for p in data["plugins"]}
    assert rows == {"tensorplug": "loaded", "broken": "blocked", "half": "blocked", "hookraise": "blocked",
                    "sneaky": "blocked", "typo": "blocked", "conflict": "blocked", "elsewhere": "blocked",
                    "good": "loaded", "grown": "blocked", "legacy": "blocked", "numpy": "loaded",
                    **{name: "blocked" for name in (*HOSTILE_PLUGINS, *ABRUPT_PLUGINS, *CONTRACT_PLUGINS)}}  # fmt: skip
