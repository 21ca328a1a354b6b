"""The export round trip of ``check_kernel``: the kernel exported in each format with ``tp.export`` and run by the
runner the format's ``ExporterSpec`` declares, against eager; the values compared as the exporter kit compares
them (``tensorplug.testing._export_kit``)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from typing import Any

from tensorplug.testing._case import Case
from tensorplug.testing._kernel_checks import Example, KernelCheck, hosts, kernel_op, leaves_host, outputs

__all__ = ["export_checks", "formats"]


def formats(asked: Sequence[str] | None) -> list[str]:
    import tensorplug as tp

    return [spec.format for spec in tp.exporters()] if asked is None else list(asked)


def export_checks(
    name: str, attrs: dict[str, Any], fmt: str, examples: Sequence[Example], asked: Sequence[str] | None
) -> list[KernelCheck]:
    """Export the kernel in ``fmt`` on each example, run it with the format's runner, compare it with eager.

    A refusal (an ExportError) is ``not exportable`` (skipped; failed where ``exporters=`` named the format); the
    runner's declared ``kernels`` are not consulted: the exporter decides (a kernel outside the catalogue may
    export through its translation or decomposition)."""
    import tensorplug as tp
    from tensorplug._runtime._registry import exporter_registry, resolve
    from tensorplug.testing._export_kit import ExportRunner

    named = asked is not None
    refused = "failed" if named else "skipped"
    spec = exporter_registry.get(fmt)
    if spec is None:
        installed = ", ".join(s.format for s in tp.exporters()) or "none"
        return [
            KernelCheck(
                "export", fmt, "-", "failed", f"no exporter of format {fmt!r} is installed (installed: {installed})"
            )
        ]
    if spec.runner is None:
        why = f"the exporter (from {spec.source}) declares no runner (ExporterSpec.runner): nothing runs what it writes"
        return [KernelCheck("export", fmt, "-", refused, why)]
    try:
        made = resolve(spec.runner, f"runner of the exporter {fmt!r} (from {spec.source})")
        runner = made if isinstance(made, ExportRunner) else made()
    except ImportError as exc:
        return [KernelCheck("export", fmt, "-", "skipped", f"its runner cannot be loaded: {exc}")]
    if not isinstance(runner, ExportRunner):
        what = f"the runner of {fmt!r} (from {spec.source}) gave a {type(runner).__name__}, not an ExportRunner"
        return [KernelCheck("export", fmt, "-", "failed", what)]
    where = f"{fmt} on {runner.backend}"
    if runner.backend not in tp.list_backends():
        return [
            KernelCheck("export", where, "-", "skipped", f"the runner's backend {runner.backend!r} is not installed")
        ]
    if tp.get_kernel(name, runner.backend) is None and not tp.decomposition_stack(name):
        why = f"the kernel does not run on the runner's backend {runner.backend!r}, which makes the values to match"
        return [KernelCheck("export", where, "-", "skipped", why)]
    tp.set_backend(runner.backend)
    return [_export_one(name, attrs, fmt, ex, runner, where, refused) for ex in examples]


def _export_one(
    name: str, attrs: dict[str, Any], fmt: str, ex: Example, runner: Any, where: str, refused: str
) -> KernelCheck:
    import tensorplug as tp
    from tensorplug.testing._export_kit import _compare

    def ended(outcome: str, detail: str) -> KernelCheck:
        return KernelCheck("export", where, ex.label, outcome, detail)

    op = kernel_op(name, attrs, ex)
    leaves = ex.leaves()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = hosts(outputs(op(*leaves)))
            artefact = tp.export(op, *leaves, format=fmt, input_names=ex.names())
        except tp.ExportError as exc:
            for reason, pattern in runner.refusals.items():
                if re.search(pattern, str(exc)):
                    return ended("skipped", f"refused ({reason}): {exc}")
            return ended(refused, f"not exportable: {exc}")
        except Exception as exc:
            return ended("failed", f"the export raised {type(exc).__name__}: {exc}")
    try:
        got = list(runner.run(artefact, leaves_host(ex)))
    except Exception as exc:
        return ended("failed", f"{runner.name} raised {type(exc).__name__}: {str(exc)[:300]}")
    floats = [a.dtype.name for a in expected if a.dtype.kind == "f"]
    rtol, atol = max((ex.tolerance(d) for d in floats), default=(0.0, 0.0))
    problem = _compare(Case(name, op, rtol=rtol, atol=atol), got, expected)
    if problem is not None:
        return ended("failed", f"{runner.name} differs from eager: {problem}")
    return ended("passed", f"run by {runner.name}")
