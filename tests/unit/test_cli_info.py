"""``tensorplug info`` with the core and the NumPy backend (plus whatever else this session installed).

Each run is a fresh ``python -m tensorplug info`` in a subprocess: discovery
happens at import. Expected plugins come from ``importlib.metadata`` (not
from tensorplug's own entry-point reader), expected kernels from the
catalogue in ``kernel_names``. tests/core_only, tests/plugins, tests/all and the
plugins' own tests (plugins/*/tests) run the same command with other sets of installed plugins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from typing import Any

from tensorplug import kernel_names

NO_TORCH_CHECK = (
    "import sys; from tensorplug._tools._cli import main; status = main(sys.argv[1:]); "
    "print('TORCH_IMPORTED', 'torch' in sys.modules, file=sys.stderr); sys.exit(status)"
)


def info(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``tensorplug info ARGS`` in a fresh interpreter; stderr says whether torch got imported."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")} | (env or {})
    command = [sys.executable, "-c", NO_TORCH_CHECK, "info", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=120)


def info_json(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = info("--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def installed_plugins() -> set[tuple[str, str, str]]:
    """(entry-point name, distribution, version) of every installed plugin, as importlib.metadata sees them."""
    return {(ep.name, ep.dist.name, ep.dist.version) for ep in entry_points(group="tensorplug") if ep.dist}


def test_json_lists_every_installed_plugin_as_loaded() -> None:
    data = info_json()
    rows = {(p["name"], p["distribution"], p["version"]): p for p in data["plugins"]}
    assert installed_plugins() | {("tensorplug", "tensorplug", data["tensorplug"])} == set(rows)
    assert all(p["status"] == "loaded" and p["error"] is None for p in rows.values())
    numpy_row = next(p for p in data["plugins"] if p["name"] == "numpy")
    assert numpy_row["backends"] == ["numpy"]
    assert numpy_row["kernels"] == len(kernel_names.CATALOGUE)


def test_json_kernel_matrix_covers_the_catalogue_on_numpy() -> None:
    data = info_json()
    rows = {row["kernel"]: row for row in data["kernels"]}
    assert set(kernel_names.CATALOGUE) <= set(rows)
    assert {rows[name]["backends"]["numpy"] for name in kernel_names.CATALOGUE} == {"tensorplug-numpy"}
    assert rows["Add"]["differentiable"] is True
    assert rows["Equal"]["differentiable"] is False  # a comparison: declared not differentiable
    assert rows["Add"]["gradient"] in {p["distribution"] for p in data["plugins"]}


def test_backends_without_init_are_not_initialised_and_torch_is_not_imported() -> None:
    done = info("--json")
    assert done.returncode == 0, done.stderr
    assert "TORCH_IMPORTED False" in done.stderr
    data = json.loads(done.stdout)
    numpy_row = next(b for b in data["backends"] if b["name"] == "numpy")
    assert numpy_row["state"] == "not initialised"
    assert numpy_row["device"] is None
    assert numpy_row["source"] == "tensorplug-numpy"
    assert "--init" in data["default_backend"]["reason"]


def test_init_initialises_and_names_the_default_and_why() -> None:
    data = info_json("--init")
    numpy_row = next(b for b in data["backends"] if b["name"] == "numpy")
    assert (numpy_row["state"], numpy_row["device"], numpy_row["error"]) == ("initialised", "cpu", None)
    names = [b["name"] for b in data["backends"]]
    priorities = [b["priority"] for b in data["backends"]]
    assert priorities == sorted(priorities, reverse=True)
    assert data["default_backend"]["name"] == names[0]
    assert data["default_backend"]["reason"].startswith("the highest priority")


def test_environment_variables_are_shown_and_blocked_plugins_reported() -> None:
    data = info_json(env={"TENSORPLUG_PLUGINS": "numpy", "TENSORPLUG_DEBUG": "1"})
    assert data["environment"] == {"TENSORPLUG_PLUGINS": "numpy", "TENSORPLUG_DEBUG": "1"}
    others = [p for p in data["plugins"] if p["name"] not in ("tensorplug", "numpy")]
    assert all(p["status"] == "blocked" and "TENSORPLUG_PLUGINS" in p["error"] for p in others)


def test_disabled_autoload_leaves_no_backend_and_says_autoload_is_off() -> None:
    data = info_json(env={"TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert data["backends"] == []
    assert data["default_backend"]["name"] is None
    reason = data["default_backend"]["reason"]  # numpy is installed: not "no backend is installed"
    assert reason.startswith("no backend is registered: TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD is set")
    assert "numpy (tensorplug-numpy)" in reason
    numpy_row = next(p for p in data["plugins"] if p["name"] == "numpy")
    assert numpy_row["status"] == "blocked"


def test_text_output_has_the_three_sections() -> None:
    done = info()
    assert done.returncode == 0, done.stderr
    text = done.stdout
    for heading in ("Plugins (", "Backends (", "Kernels ("):
        assert heading in text
    assert "numpy *" in text  # the default backend is starred
    matrix = text[text.index("Kernels (") :]
    assert len([line for line in matrix.splitlines() if line.startswith("  Add ")]) == 1
    assert f"{len(kernel_names.CATALOGUE)} kernels (" in text  # the summary line closes the output


def test_brief_leaves_out_the_matrix_but_keeps_the_summary() -> None:
    done = info("--brief")
    assert done.returncode == 0, done.stderr
    assert "Kernels (" not in done.stdout
    assert f"{len(kernel_names.CATALOGUE)} kernels (" in done.stdout
