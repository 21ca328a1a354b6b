"""``check_kernel``: one call that checks a kernel, on every installed backend that runs it, and through every
installed exporter that can run what it exports.

For each backend (the kernel registered there, or its decomposition run there: never a data-moving fallback) and
each example, the kernel runs eagerly, and these checks follow (:data:`CHECKS`): it ran; it left its inputs as
they were, bit for bit; its outputs have the declared dtypes and shapes; it computes what its decomposition
computes; its gradient agrees with finite differences, to the order asked; ``tp.function``'s replay gives eager's
bits, and so does the replay of its gradient, by ``tp.function`` and by eager backprop's gradient programs; a
scoped gradient override is honoured eagerly and by ``tp.function``, and undone after its scope. Then, per
exporter, the kernel is exported and run by the format's runner (``ExporterSpec.runner``). The checks live in
``tensorplug.testing._kernel_checks`` and ``_kernel_export``. What a check cannot apply to is skipped, with the
reason, in the :class:`KernelReport`; a failure raises AssertionError listing every failure and what to do.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tensorplug.testing import _kernel_checks as later
from tensorplug.testing._kernel_checks import Example, Failed, KernelCheck, Skipped
from tensorplug.testing._kernel_export import export_checks, formats

__all__ = ["CHECKS", "KernelCheck", "KernelReport", "check_kernel"]

CHECKS = (
    "backend",
    "runs",
    "inputs unchanged",
    "output dtypes",
    "output shapes",
    "decomposition",
    "gradient",
    "replay",
    "gradient replay",
    "gradient override",
    "export",
)
"""Every check, in the order a backend and an example go through them (``backend``: whether the backend runs the
kernel at all; ``export``: per exporter, on the runner's backend)."""

HINTS = {
    "backend": "register the kernel for that backend, or its decomposition (tp.register_decomposition), or leave "
    "the backend out of backends=",
    "runs": "the kernel raised on these inputs: fix it, or give examples it accepts",
    "inputs unchanged": "a kernel must not write into its inputs: compute into a new array (y = x * 2, not x *= 2)",
    "output dtypes": "return the declared dtype (cast the result), or declare the right one with output_dtypes=",
    "output shapes": "return the declared shape, or declare the right one with output_shapes=",
    "decomposition": "the kernel and its decomposition must compute the same: fix the one that is wrong (pass "
    "rtol=/atol= where the difference is rounding)",
    "gradient": "the gradient (tp.register_gradient, or through the decomposition) disagrees with finite "
    "differences: fix it, or give examples away from kinks",
    "replay": "tp.function replays the kernel through the backend's lowering, which must give eager's bits: check "
    "what the kernel declares it applies (kernel.applies) and what it reads besides its inputs and attrs",
    "gradient replay": "replays of the gradient must give eager's bits: a gradient declaring replay=True must be a "
    "function of dy, saved and attrs alone, made of ops",
    "gradient override": "inside tp.gradient_overrides the override's gradient must be used, and outside it the "
    "kernel's own: the gradient must come from the gradient registry, not be fixed by the kernel",
    "export": "the exported program must give eager's values in the format's runtime: check the kernel's "
    "translation or decomposition for that format",
}
"""What to do when a check fails, as the failure message says it."""


@dataclass(frozen=True)
class KernelReport:
    """What :func:`check_kernel` found: every check, in the order it ran; :meth:`text` is a readable table."""

    kernel: str
    attrs: Mapping[str, Any] = field(default_factory=dict)
    checks: tuple[KernelCheck, ...] = ()

    @property
    def passed(self) -> list[KernelCheck]:
        return [c for c in self.checks if c.outcome == "passed"]

    @property
    def failed(self) -> list[KernelCheck]:
        return [c for c in self.checks if c.outcome == "failed"]

    @property
    def skipped(self) -> list[KernelCheck]:
        return [c for c in self.checks if c.outcome == "skipped"]

    def outcome(self, check: str, where: str, example: str | None = None) -> str | None:
        """The outcome of ``check`` on ``where`` (for the example labelled ``example``, or the first that ran)."""
        for c in self.checks:
            if c.check == check and c.where == where and (example is None or c.example == example):
                return c.outcome
        return None

    def call(self) -> str:
        """The call as written: ``check_kernel('Swish', beta=1.0)``."""
        attrs = "".join(f", {k}={v!r}" for k, v in self.attrs.items())
        return f"check_kernel({self.kernel!r}{attrs})"

    def text(self) -> str:
        """A table: one line per check (what ran where, on which example, and how it ended), then the counts."""
        from tensorplug._inspection._coverage import text_table

        rows = [[c.check, c.where, c.example, c.outcome, _short(c.detail)] for c in self.checks]
        lines = text_table(["check", "where", "example", "outcome", "detail"], rows)
        counts = f"{len(self.passed)} passed, {len(self.failed)} failed, {len(self.skipped)} skipped"
        return "\n".join([f"{self.call()}: {counts}", *lines])

    def failure_text(self) -> str:
        """Every failure with where it happened and what to do, then the whole table."""
        lines = [f"{self.call()}: {len(self.failed)} of {len(self.checks)} checks failed"]
        for c in self.failed:
            lines.append(f"- {c.check} on {c.where}, example {c.example}: {c.detail}")
            lines.append(f"  what to do: {HINTS[c.check]}")
        return "\n".join([*lines, "", self.text()])


def _short(detail: str, width: int = 100) -> str:
    text = " ".join(detail.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def check_kernel(
    name: str,
    *example_inputs: Mapping[str, Any],
    backends: Sequence[str] | None = None,
    output_dtypes: str | Sequence[str] | Callable[[dict[str, Any]], Any] | None = None,
    output_shapes: Sequence[Any] | Callable[[dict[str, Any]], Any] | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    order: int = 2,
    exporters: Sequence[str] | None = None,
    attrs: Mapping[str, Any] | None = None,
    **kernel_attrs: Any,
) -> KernelReport:
    """Check kernel ``name`` on each example, on every installed backend that runs it and through every installed
    exporter; return the :class:`KernelReport`, or raise AssertionError listing every failure.

    Each example maps the kernel's input names to NumPy arrays (a list of arrays for a list input), as
    ``run_kernel(name, inputs, attrs)`` takes them; give several (float32 and float64, say). The kernel's attrs
    are the other keyword arguments; an attr named like one of this function's keywords (``backends``,
    ``output_dtypes``, ``output_shapes``, ``rtol``, ``atol``, ``order``, ``exporters``, ``attrs``) goes in
    ``attrs={...}``.

    ``backends`` (default: every installed backend) are those that run the kernel without moving data: a kernel
    registered there, or its decomposition (with every op it calls there). The others are skipped (named in
    ``backends=``: failed). A backend that cannot be initialised is skipped. ``output_dtypes`` declares each output's
    dtype (a dtype name for one output, a sequence of them, or a function of the inputs' dtypes by name: lists for list
    inputs) and ``output_shapes`` each output's shape (a tuple for one output, a list of tuples, or a function of the
    inputs' shapes by name); else the kernel reference declares them for a catalogue kernel, else the decomposition's
    outputs, else every backend must agree with the first. ``rtol`` and ``atol`` bound the difference from the
    decomposition and from an exported program (by default 1e-5 and 1e-6 in float32, 1e-10 and 1e-12 in float64;
    integers and bools must be equal). ``order`` is the highest order of derivative checked numerically (0: no
    gradient check), in float64 where the backend has it. ``exporters`` names the formats to export through
    (default: every installed one; one whose ExporterSpec declares no runner is skipped); a format that refuses
    the kernel is skipped as not exportable, unless named here. Replays must give eager's bits, or be within
    ``Backend.compile_ulps`` where the backend compiled the program.

    The active backend, the warnings filters and the gradient scopes are as they were afterwards; eager backprop's
    gradient programs are forgotten (they are traced again as needed).

    >>> import numpy as np
    >>> import tensorplug as tp
    >>> report = check_kernel("Softplus", {"x": np.array([-1.0, 0.5, 3.0], np.float32)}, backends=["numpy"])
    >>> report.outcome("gradient", "numpy")
    'passed'
    """
    import tensorplug as tp

    if not isinstance(name, str) or not name:
        raise TypeError(f"check_kernel: the kernel name must be a non-empty str, got {name!r}")
    merged = dict(attrs or {})
    clash = sorted(set(merged) & set(kernel_attrs))
    if clash:
        raise TypeError(f"check_kernel({name!r}): attr {clash[0]!r} given both in attrs= and as a keyword")
    merged.update(kernel_attrs)
    if not example_inputs:
        raise TypeError(f"check_kernel({name!r}): give at least one example, a mapping of input names to arrays")
    if order not in (0, 1, 2):
        raise ValueError(f"check_kernel({name!r}): order must be 0, 1 or 2, got {order!r}")
    examples = [later.example(name, i, e, rtol, atol) for i, e in enumerate(example_inputs, 1)]
    checks: list[KernelCheck] = []
    previous = tp.get_backend()
    seen: dict[int, tuple[str, list[str], list[tuple[int, ...]]]] = {}  # example -> the first backend's outputs
    declared = _Declared(name, output_dtypes, output_shapes)
    try:
        with warnings.catch_warnings():
            for backend in _backends(name, backends, checks):
                tp.set_backend(backend)
                for ex in examples:
                    checks += _on_backend(name, merged, backend, ex, order, declared, seen, backends is not None)
            for fmt in formats(exporters):
                checks += export_checks(name, merged, fmt, examples, exporters)
    finally:
        tp.set_backend(previous)
        later.forget_gradient_programs()
    if not any(c.check == "runs" for c in checks):
        ran = "none of the backends named" if backends is not None else "no installed backend"
        checks.append(KernelCheck("backend", "-", "-", "failed", f"the kernel runs on {ran}"))
    report = KernelReport(name, merged, tuple(checks))
    if report.failed:
        raise AssertionError(report.failure_text())
    return report


def _backends(name: str, asked: Sequence[str] | None, checks: list[KernelCheck]) -> list[str]:
    """The backends that run kernel ``name`` without moving data; a line in ``checks`` for each one left out."""
    import tensorplug as tp

    installed = tp.list_backends()
    chosen = list(installed) if asked is None else list(asked)
    runs = []
    for backend in chosen:
        outcome = "skipped" if asked is None else "failed"
        if backend not in installed:
            checks.append(KernelCheck("backend", backend, "-", "failed", f"no backend {backend!r} is installed"))
            continue
        try:
            tp.backend(backend)
        except tp.TensorplugError as exc:
            checks.append(KernelCheck("backend", backend, "-", "skipped", f"cannot be initialised: {exc}"))
            continue
        if tp.get_kernel(name, backend) is None and not tp.decomposition_stack(name):
            why = f"no kernel {name!r} is registered for {backend!r} and it has no decomposition"
            through = _fallback(name, backend)
            if through is not None:
                why += f" (it would run on the fallback backend {through!r}, moving the data)"
            checks.append(KernelCheck("backend", backend, "-", outcome, why))
            continue
        runs.append(backend)
    return runs


def _fallback(name: str, backend: str) -> str | None:
    from tensorplug._inspection._coverage import FALLBACK_PREFIX, _through_fallback

    through = _through_fallback(name, backend)
    return None if through is None else through.removeprefix(FALLBACK_PREFIX)


class _Declared:
    """The output dtypes and shapes an example must give, and who declares them."""

    def __init__(self, name: str, dtypes: Any, shapes: Any) -> None:
        self.name, self.dtypes, self.shapes = name, dtypes, shapes

    def dtypes_for(self, ex: Example) -> list[str] | None:
        if self.dtypes is None:
            return None
        value = self.dtypes(ex.dtypes()) if callable(self.dtypes) else self.dtypes
        return [str(value)] if isinstance(value, str) else [str(v) for v in value]

    def shapes_for(self, ex: Example) -> list[tuple[int, ...]] | None:
        if self.shapes is None:
            return None
        value = self.shapes(ex.shapes()) if callable(self.shapes) else self.shapes
        one = isinstance(value, tuple) and all(isinstance(v, int) for v in value)
        return [tuple(value)] if one else [tuple(v) for v in value]


def _on_backend(
    name: str,
    attrs: dict[str, Any],
    backend: str,
    ex: Example,
    order: int,
    declared: _Declared,
    seen: dict[int, tuple[str, list[str], list[tuple[int, ...]]]],
    named: bool,
) -> list[KernelCheck]:
    """Every check of one example on the active backend (``named``: in ``backends=``)."""
    import tensorplug as tp

    done: list[KernelCheck] = []

    def record(check: str, run: Callable[[], str]) -> None:
        try:
            detail = run()
        except Skipped as skip:
            done.append(KernelCheck(check, backend, ex.label, "skipped", str(skip)))
        except Failed as failure:
            done.append(KernelCheck(check, backend, ex.label, "failed", str(failure)))
        except AssertionError as exc:
            done.append(KernelCheck(check, backend, ex.label, "failed", str(exc).strip()))
        except Exception as exc:
            done.append(KernelCheck(check, backend, ex.label, "failed", f"{type(exc).__name__}: {exc}"))
        else:
            done.append(KernelCheck(check, backend, ex.label, "passed", detail))

    inputs = ex.tensors()
    own = tp.get_kernel(name, backend) is not None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", tp.FallbackWarning)  # the kernel runs here, moving nothing
            outputs = later.outputs(tp.run_kernel(name, inputs, attrs))
    except Exception as exc:
        lacking = [e for e in (exc, exc.__cause__) if isinstance(e, tp.KernelNotFoundError | tp.FallbackWarning)]
        if lacking and not own and not named:  # the ops of the decomposition are not all there
            why = f"its decomposition needs a kernel the backend lacks: {type(lacking[0]).__name__}: {lacking[0]}"
            done.append(KernelCheck("backend", backend, ex.label, "skipped", why))
        else:
            failed = f"{type(exc).__name__}: {exc}{_named(name, ex)}"
            done.append(KernelCheck("runs", backend, ex.label, "failed", failed))
        return done
    done.append(KernelCheck("runs", backend, ex.label, "passed", _provider(name, backend)))
    record("inputs unchanged", lambda: ex.unchanged(inputs))
    decomposed = later.decomposition_outputs(name, ex, attrs) if own and tp.decomposition_stack(name) else None
    by = None if decomposed is None else decomposed[0]  # the decomposition's outputs (None: it raised)
    record("output dtypes", lambda: _dtypes(name, attrs, ex, inputs, outputs, declared, by, seen, backend))
    record("output shapes", lambda: _shapes(ex, outputs, declared, by, seen, backend))
    seen.setdefault(ex.index, (backend, [o.dtype for o in outputs], [tuple(o.shape) for o in outputs]))
    record("decomposition", lambda: later.against_decomposition(name, own, ex, outputs, decomposed))
    differentiable = later.differentiable(name, ex, outputs)
    record("gradient", lambda: later.gradient(name, attrs, ex, order, differentiable))
    record("replay", lambda: later.replay(name, attrs, ex))
    record("gradient replay", lambda: later.gradient_replay(name, attrs, ex, differentiable))
    record("gradient override", lambda: later.override(name, attrs, ex, differentiable))
    return done


def _named(name: str, ex: Example) -> str:
    """For a catalogue kernel given other input names than its reference entry's: what they are."""
    from tensorplug.kernel_reference import REFERENCE

    entry = REFERENCE.get(name)
    if entry is None or {i.name for i in entry.inputs} == set(ex.host):
        return ""
    listed = ", ".join(f"{i.name} (a list)" if i.is_list else i.name for i in entry.inputs)
    return f" (the kernel reference names its inputs: {listed})"


def _provider(name: str, backend: str) -> str:
    import tensorplug as tp

    spec = tp.get_kernel(name, backend)
    if spec is not None:
        return f"kernel from {spec.source}"
    return f"as its decomposition (from {tp.decomposition_stack(name)[-1].source})"


def _dtypes(
    name: str,
    attrs: dict[str, Any],
    ex: Example,
    inputs: dict[str, Any],
    outputs: list[Any],
    declared: _Declared,
    decomposed: list[Any] | None,
    seen: dict[int, tuple[str, list[str], list[tuple[int, ...]]]],
    backend: str,
) -> str:
    """The outputs' dtypes against what declares them: ``output_dtypes=``, the kernel reference, the decomposition,
    or the first backend that ran the example."""
    from tensorplug.kernel_reference import REFERENCE, check_call

    got = [o.dtype for o in outputs]
    want = declared.dtypes_for(ex)
    if want is not None:
        return _same("dtype", got, want, "output_dtypes=")
    if name in REFERENCE:
        problems = check_call(name, inputs, attrs, outputs, lambda t: t.dtype, lambda t: tuple(t.shape))
        if problems:
            raise Failed("the call disagrees with the kernel reference: " + "; ".join(problems))
        return "as the kernel reference declares"
    if decomposed is not None:
        return _same("dtype", got, [o.dtype for o in decomposed], "the decomposition")
    first = seen.get(ex.index)
    if first is None or first[0] == backend:
        raise Skipped("nothing declares them (output_dtypes=, a kernel reference entry or a decomposition)")
    return _same("dtype", got, first[1], f"backend {first[0]!r}")


def _shapes(
    ex: Example,
    outputs: list[Any],
    declared: _Declared,
    decomposed: list[Any] | None,
    seen: dict[int, tuple[str, list[str], list[tuple[int, ...]]]],
    backend: str,
) -> str:
    """The outputs' shapes against ``output_shapes=``, the decomposition, or the first backend that ran it."""
    got = [tuple(o.shape) for o in outputs]
    want = declared.shapes_for(ex)
    if want is not None:
        return _same("shape", got, want, "output_shapes=")
    if decomposed is not None:
        return _same("shape", got, [tuple(o.shape) for o in decomposed], "the decomposition")
    first = seen.get(ex.index)
    if first is None or first[0] == backend:
        raise Skipped("nothing declares them (output_shapes= or a decomposition)")
    return _same("shape", got, first[2], f"backend {first[0]!r}")


def _same(what: str, got: Sequence[Any], want: Sequence[Any], by: str) -> str:
    if len(got) != len(want):
        raise Failed(f"{len(got)} outputs, {by} declares {len(want)}")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g != w:
            raise Failed(f"output {i} has {what} {_text(g)}, {by} declares {_text(w)}")
    return f"as {by} declares" if by.endswith("=") else f"as {by} gives"


def _text(value: Any) -> str:
    return str(list(value)) if isinstance(value, tuple) else str(value)
