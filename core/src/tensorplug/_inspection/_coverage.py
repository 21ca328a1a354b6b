"""The coverage listing: every kernel name x every registered backend, and its gradient.

Generated from the registries on each call (never a hand-kept list), so the
documentation can not drift from the code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tensorplug import kernel_names
from tensorplug._plugins._overrides import active_gradient
from tensorplug._runtime._absent_kernels import check as check_declared
from tensorplug._runtime._engine import engine
from tensorplug._runtime._registry import decomposition_registry, gradient_registry, kernel_registry


@dataclass(frozen=True)
class CoverageRow:
    """One kernel: which distribution provides it on each backend, and its gradient."""

    kernel: str
    backends: dict[str, str | None]  # backend -> the kernel's distribution, "decomposition:<its source>",
    # "fallback:<backend>", or None
    gradient: str | None  # distribution providing the gradient, or None when there is none
    differentiable: bool | None  # True: has a gradient; False: declared not differentiable; None: no entry
    shadows: tuple[str, ...] = ()  # distributions whose gradient the active one shadows
    notes: dict[str, str] = field(default_factory=dict)  # backend -> its KernelSpec's note ("per-chunk"), if any


@dataclass(frozen=True)
class Coverage:
    """The whole listing, with the counts a note or a CLI prints."""

    backends: tuple[str, ...]
    rows: tuple[CoverageRow, ...]

    def kernels_for(self, backend: str) -> int:
        """Kernels the backend registers itself."""
        return sum(1 for row in self.rows if _provider_kind(row.backends.get(backend)) == "own")

    def missing_for(self, backend: str) -> list[str]:
        """Kernels the backend can not run at all (neither its own nor through its fallback)."""
        return [row.kernel for row in self.rows if not row.backends.get(backend)]

    def noted_for(self, backend: str, note: str) -> list[str]:
        """Kernels whose KernelSpec on ``backend`` carries ``note`` (``noted_for("dask", "per-chunk")``)."""
        return [row.kernel for row in self.rows if row.notes.get(backend) == note]

    def fallback_for(self, backend: str) -> list[str]:
        """Kernels the backend runs through its fallback backend."""
        return [row.kernel for row in self.rows if _provider_kind(row.backends.get(backend)) == "fallback"]

    def decomposed_for(self, backend: str) -> list[str]:
        """Kernels the backend has none of its own and runs as their decomposition, with its ops."""
        return [row.kernel for row in self.rows if _provider_kind(row.backends.get(backend)) == "decomposition"]

    @property
    def gradients(self) -> int:
        return sum(1 for row in self.rows if row.differentiable)

    @property
    def not_differentiable(self) -> int:
        return sum(1 for row in self.rows if row.differentiable is False)

    def summary(self) -> str:
        parts = []
        for backend in self.backends:
            part = f"{backend}: {self.kernels_for(backend)}"
            by_decomposition = len(self.decomposed_for(backend))
            if by_decomposition:
                part += f" + {by_decomposition} by decomposition"
            by_fallback = len(self.fallback_for(backend))
            if by_fallback:
                part += f" + {by_fallback} by fallback"
            noted: dict[str, int] = {}
            for row in self.rows:
                note = row.notes.get(backend)
                if note:
                    noted[note] = noted.get(note, 0) + 1
            if noted:
                part += " (" + ", ".join(f"{count} {note}" for note, count in noted.items()) + ")"
            parts.append(part)
        per_backend = ", ".join(parts) or "no backend"
        return (
            f"{len(self.rows)} kernels ({per_backend}); {self.gradients} with a gradient, "
            f"{self.not_differentiable} declared not differentiable, "
            f"{sum(1 for r in self.rows if r.differentiable is None)} without a gradient entry"
        )

    def table(self) -> str:
        """A plain-text table: one line per kernel, one column per backend, then the gradient."""
        headers = ["kernel", *self.backends, "gradient"]
        lines = [headers]
        for row in self.rows:
            cells = [row.kernel]
            cells += [_cell(row.backends.get(b), row.notes.get(b)) for b in self.backends]
            if row.differentiable is None:
                cells.append("missing")
            elif row.differentiable is False:
                cells.append(f"not differentiable ({row.gradient})")
            else:
                shadow = f", shadows {', '.join(row.shadows)}" if row.shadows else ""
                cells.append(f"{row.gradient}{shadow}")
            lines.append(cells)
        return "\n".join([*text_table(lines[0], lines[1:]), "", self.summary()])

    def __str__(self) -> str:
        return self.table()


def _cell(provider: str | None, note: str | None) -> str:
    if provider is None:
        return "-"
    return f"{provider} ({note})" if note else provider


def text_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Lines of a plain-text table: left-aligned columns two spaces apart, a rule under the headers."""
    lines = [headers, *rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(headers))]
    text = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip() for line in lines]
    text.insert(1, "  ".join("-" * w for w in widths))
    return text


FALLBACK_PREFIX = "fallback:"
DECOMPOSITION_PREFIX = "decomposition:"


def _provider_kind(provider: str | None) -> str:
    """ "own" (a distribution's kernel), "decomposition" (its ops, run there), "fallback" (run on the fallback
    backend) or "missing"."""
    if provider is None:
        return "missing"
    if provider.startswith(DECOMPOSITION_PREFIX):
        return "decomposition"
    return "fallback" if provider.startswith(FALLBACK_PREFIX) else "own"


def _through_fallback(kernel: str, backend: str) -> str | None:
    """``"fallback:<name>"`` when the backend's fallback chain reaches a backend with the kernel."""
    seen = {backend}
    spec = engine.specs.get(backend)
    while spec is not None and spec.fallback is not None and spec.fallback not in seen:
        seen.add(spec.fallback)
        if kernel_registry.get((kernel, spec.fallback)) is not None:
            return f"{FALLBACK_PREFIX}{spec.fallback}"
        spec = engine.specs.get(spec.fallback)
    return None


def coverage() -> Coverage:
    """Every kernel (the catalogue plus anything registered) x every registered backend, with gradients.

    The kernels an initialised backend names by convention (``catalogue_kernels``) and does not define are
    missing there (or run through its fallback); a backend not yet initialised is listed as declared, as
    checking would import its library.

    >>> import tensorplug as tp
    >>> row = next(r for r in tp.coverage().rows if r.kernel == "Add")
    >>> row.backends["numpy"], row.gradient
    ('tensorplug-numpy', 'tensorplug')
    """
    backends = tuple(engine.names())
    for backend in backends:
        if backend in engine.instances:  # initialised: its kernels named by convention can be checked
            check_declared(backend)
    names = list(kernel_names.CATALOGUE)
    known = set(names)
    extra = {spec.kernel_name for spec in kernel_registry} | {spec.kernel_name for spec in gradient_registry}
    extra |= {spec.kernel_name for spec in decomposition_registry}
    names += sorted(extra - known)
    rows = []
    for name in names:
        decomposition = decomposition_registry.get(name)
        providers: dict[str, str | None] = {}
        notes: dict[str, str] = {}
        for backend in backends:
            spec = kernel_registry.get((name, backend))
            if spec is not None:
                providers[backend] = spec.source
            elif decomposition is not None:  # run as its ops there, before any fallback
                providers[backend] = f"{DECOMPOSITION_PREFIX}{decomposition.source}"
            else:
                providers[backend] = _through_fallback(name, backend)
            if spec is not None and spec.note:
                notes[backend] = spec.note
        stack = gradient_registry.stack(name)
        active = active_gradient(name)  # a scoped override first, in this thread
        if active is None:
            rows.append(CoverageRow(name, providers, None, None, notes=notes))
            continue
        shadows = tuple(s.source for s in stack if s is not active)
        rows.append(CoverageRow(name, providers, active.source, active.grad is not None, shadows, notes))
    return Coverage(backends, tuple(rows))
