"""A backend written for an earlier backend contract: tensorplug-fixture-legacy's ``legacy`` backend still defines
the removed ``lower(program)``, which the core never calls. The conformance run (``tensorplug check``, with or
without ``--tensorplug-traced``) fails on it, saying what replaced the method; ``tp.function`` says so too, and
runs the plain replay. Each test runs a fresh interpreter with only this plugin and numpy allowed; the fixture
declares its backend only when ``TP_FIXTURE_LEGACY=1``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_discovery import clean_env, run_script

ENV = {"TP_FIXTURE_LEGACY": "1", "TENSORPLUG_PLUGINS": "legacy,numpy"}
MIGRATION = (
    "backend 'legacy' defines lower(program), which the backend contract no longer has (removed in tensorplug "
    "0.1.0), so the core never calls it: rename it compile(program) and adapt it to the replay's calling "
    "convention, replay(arguments, variables, host) -> (outputs, updates)"
)


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tensorplug", "check", "legacy", *args],
        cwd=cwd,
        env=clean_env(**ENV),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_tensorplug_check_fails_the_backend_with_the_migration(tmp_path: Path) -> None:
    for options in (["--tensorplug-traced"], []):
        result = check(*options, "-k", "Add-float32 or Multiply-float32 or backend-contract", cwd=tmp_path)
        out = " ".join(result.stdout.split())
        assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
        assert "tensorplug-conformance[legacy]::backend-contract" in result.stdout
        assert MIGRATION in out
        assert "lower_step(program, index)" in out
        assert "2 passed, 1 failed" in out  # the cases pass eagerly: only the contract fails


def test_tp_function_tells_and_runs_the_plain_replay_without_calling_lower() -> None:
    out = run_script(
        """
        import warnings
        from tp_fixture_legacy._backend import LOWER_CALLS

        tp.set_backend("legacy")
        double = tp.function(lambda x: x * 2.0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = double(tp.tensor([1.0])).tolist()
        second = double(tp.tensor([3.0])).tolist()
        result["values"] = [first, second]
        result["warnings"] = [str(w.message) for w in caught if issubclass(w.category, tp.FunctionWarning)]
        result["lower_calls"] = LOWER_CALLS[0]
        """,
        **ENV,
    )
    assert out["values"] == [[2.0], [6.0]]
    assert out["lower_calls"] == 0
    (message,) = out["warnings"]
    assert message.startswith(MIGRATION), message
    assert message.endswith(
        "tp.function runs the plain replay meanwhile, and the conformance suite (tensorplug check) fails until it is "
        "done"
    )
