"""What ``import tensorplug`` loads: every module costs start-up time, so what only some programs need waits for them.

Each test runs a fresh interpreter (this process has long imported everything).
"""

from __future__ import annotations

import json
import subprocess
import sys

# Standard-library modules that numpy and pluggy do not import, which tensorplug once did (or would, written the
# obvious way) at import although nothing there needs them: reading entry points with importlib.metadata (and, behind
# it, email, zipfile, csv and pathlib), the einsum labels from string, close matches from difflib (only for a
# message), json, tempfile, subprocess, logging, argparse (the CLI's, loaded by the command only).
NOT_AT_IMPORT = [
    "argparse",
    "csv",
    "difflib",
    "email",
    "importlib.metadata",
    "json",
    "logging",
    "pathlib",
    "string",
    "subprocess",
    "tempfile",
    "zipfile",
]
# Parts of tensorplug loaded on first use (tp.memory; the others are checked with the rest of tp._LAZY).
LOADED_ON_FIRST_USE = ["tensorplug._inspection._memory"]


def _modules_after_import(code_after: str = "") -> dict[str, list[str]]:
    code = (
        "import json, sys\n"
        "before = set(sys.modules)\n"
        "import tensorplug as tp\n"
        "loaded = sorted(set(sys.modules) - before)\n"
        f"{code_after}\n"
        "after_use = sorted(set(sys.modules) - before)\n"
        "print(json.dumps({'loaded': loaded, 'after_use': after_use}))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    found: dict[str, list[str]] = json.loads(result.stdout.splitlines()[-1])
    return found


def test_import_leaves_out_the_standard_library_modules_it_does_not_need() -> None:
    loaded = _modules_after_import()["loaded"]
    assert [name for name in NOT_AT_IMPORT if name in loaded] == []


def test_tp_memory_is_loaded_on_first_use() -> None:
    found = _modules_after_import("assert tp.memory() is not None and 'memory' in dir(tp)")
    assert [name for name in LOADED_ON_FIRST_USE if name in found["loaded"]] == []
    assert [name for name in LOADED_ON_FIRST_USE if name not in found["after_use"]] == []


# The registration functions and tp.losses: the loader registers plugins' declarations without them.
REGISTRATION_MODULES = [
    "tensorplug._plugins._decompositions",
    "tensorplug._plugins._exporters",
    "tensorplug._plugins._overrides",
    "tensorplug._plugins._registration",
    "tensorplug._plugins._translations",
    "tensorplug.losses",
]


def test_registration_functions_and_losses_are_loaded_on_first_use() -> None:
    use = (
        "from tensorplug import register_kernel, kernel_stack\n"
        "assert [s.source for s in kernel_stack('Add', 'numpy')] == ['tensorplug-numpy']\n"
        "assert callable(register_kernel) and callable(tp.use_gradients) and callable(tp.register_translation)\n"
        "assert isinstance(tp.exporters(), list) and tp.decompositions()\n"
        "assert float(tp.losses.mean_squared_error(tp.tensor([1.0]), tp.tensor([3.0]))) == 4.0\n"
    )
    found = _modules_after_import(use)
    assert [name for name in REGISTRATION_MODULES if name in found["loaded"]] == []
    assert [name for name in REGISTRATION_MODULES if name not in found["after_use"]] == []


def test_recording_a_call_reads_input_orders_without_the_kernel_reference() -> None:
    use = "assert tp.grad(lambda v: tp.sum(v * v - v))(tp.tensor([1.0, 2.0])).tolist() == [1.0, 3.0]"
    found = _modules_after_import(use)
    assert "tensorplug.kernel_reference" not in found["after_use"]


def test_the_input_orders_are_the_kernel_references() -> None:
    from tensorplug import kernel_names
    from tensorplug.kernel_reference import input_order

    assert {k: input_order(k) for k in kernel_names.CATALOGUE if input_order(k)} == kernel_names.INPUTS
