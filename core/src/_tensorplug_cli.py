"""The ``tensorplug`` command's entry point, outside the package so that it runs before ``import tensorplug``.

With ``TENSORPLUG_STRICT_PLUGINS=1``, a plugin that fails to load makes
``import tensorplug`` raise ``PluginError``, and a command inside the
package could not even start. Here that error is caught: ``tensorplug info``
then loads the plugins again with strict mode off, for this process only,
shows every plugin and failure together with the error strict mode raised,
and exits with status 1; any other command prints the error and exits with
status 1. (``python -m tensorplug`` imports the package first, so in strict
mode it fails as ``import tensorplug`` does.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

STRICT = "TENSORPLUG_STRICT_PLUGINS"  # tensorplug._plugins._loading.ENV_STRICT, not importable before tensorplug


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (``sys.argv[1:]`` by default); return the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        from tensorplug._tools._cli import main as run
    except Exception as exc:
        errors = sys.modules.get("tensorplug._runtime._errors")  # left in sys.modules by the failed import
        if errors is None or not isinstance(exc, errors.PluginError):
            raise
        return _strict_failure(exc, args)
    return run(args)


def _strict_failure(error: Exception, args: list[str]) -> int:
    message = f"{type(error).__name__}: {error}"
    if args[:1] != ["info"]:
        print(
            f"tensorplug: error: import tensorplug failed in strict mode ({STRICT} is set): {message}", file=sys.stderr
        )
        print("tensorplug: `tensorplug info` lists every plugin and what failed.", file=sys.stderr)
        return 1
    saved = os.environ.get(STRICT)
    os.environ[STRICT] = "0"
    try:
        from tensorplug._tools._cli import main as run
    finally:
        if saved is None:
            os.environ.pop(STRICT, None)
        else:
            os.environ[STRICT] = saved
    return run(args, strict_error=message)
