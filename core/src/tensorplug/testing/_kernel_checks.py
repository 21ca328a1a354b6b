"""The checks of ``check_kernel`` (``tensorplug.testing._check_kernel``) on one example: its inputs, the kernel
against its decomposition, the gradient against finite differences, replays against eager, a scoped gradient
override; the export round trip is ``_kernel_export``'s.

Each check returns a short detail when it passes, and raises :class:`Skipped` (with the reason) where it does not
apply or :class:`Failed` / AssertionError (saying what differs) where the kernel fails it. The replays are compared
by the traced conformance run's own functions (``tensorplug.testing._traced``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tensorplug.testing._case import Case, NotApplicable

TOLERANCES = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}
"""(rtol, atol) by dtype for the kernel against its decomposition and against an exported program."""

OVERRIDE = 7.0
"""The gradient the scoped override gives every element of each input: a value no kernel's gradient gives by chance
at every element."""


class Skipped(Exception):
    """The check does not apply here; the message says why."""


class Failed(Exception):
    """The kernel fails the check; the message says what differs."""


@dataclass(frozen=True)
class KernelCheck:
    """One check of one example where it ran: ``where`` is the backend (or ``"<format> on <backend>"`` for an
    export), ``outcome`` one of ``passed``, ``failed``, ``skipped``, ``detail`` what failed or why it was skipped."""

    check: str
    where: str
    example: str
    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class Example:
    """One example: its inputs on the host (an array, or a list of arrays, by input name) and its tolerances."""

    index: int
    host: Mapping[str, Any]
    rtol: float | None = None
    atol: float | None = None

    @property
    def label(self) -> str:
        """``1 (x: float32[3])``: its number and its inputs' dtypes and shapes."""
        parts = []
        for name, value in self.host.items():
            if isinstance(value, list):
                parts.append(f"{name}: [{', '.join(_describe(v) for v in value)}]")
            else:
                parts.append(f"{name}: {_describe(value)}")
        return f"{self.index} ({', '.join(parts)})"

    def tensors(self) -> dict[str, Any]:
        """Fresh tensors of the inputs on the active backend, made from copies (the host arrays stay as given)."""
        import tensorplug as tp

        return {
            name: [tp.tensor(np.array(v)) for v in value] if isinstance(value, list) else tp.tensor(np.array(value))
            for name, value in self.host.items()
        }

    def names(self) -> list[str]:
        """A name per input tensor, in order: ``x``, or ``xs_0``, ``xs_1`` for a list ``xs``."""
        names: list[str] = []
        for name, value in self.host.items():
            names += [f"{name}_{i}" for i in range(len(value))] if isinstance(value, list) else [name]
        return names

    def leaves(self) -> list[Any]:
        """Fresh tensors of the inputs, in the order of :meth:`names`."""
        found: list[Any] = []
        for value in self.tensors().values():
            found += value if isinstance(value, list) else [value]
        return found

    def owners(self) -> list[str]:
        """The input each tensor of :meth:`names` belongs to."""
        owners: list[str] = []
        for name, value in self.host.items():
            owners += [name] * len(value) if isinstance(value, list) else [name]
        return owners

    def rebuild(self, leaves: Sequence[Any]) -> dict[str, Any]:
        """The inputs by name from tensors in the order of :meth:`names`."""
        inputs: dict[str, Any] = {}
        at = 0
        for name, value in self.host.items():
            if isinstance(value, list):
                inputs[name] = list(leaves[at : at + len(value)])
                at += len(value)
            else:
                inputs[name] = leaves[at]
                at += 1
        return inputs

    def dtypes(self) -> dict[str, Any]:
        return {n: [v.dtype.name for v in x] if isinstance(x, list) else x.dtype.name for n, x in self.host.items()}

    def shapes(self) -> dict[str, Any]:
        return {n: [v.shape for v in x] if isinstance(x, list) else x.shape for n, x in self.host.items()}

    def tolerance(self, dtype: str) -> tuple[float, float]:
        default = TOLERANCES.get(dtype, (0.0, 0.0))
        return (default[0] if self.rtol is None else self.rtol, default[1] if self.atol is None else self.atol)

    def unchanged(self, tensors: Mapping[str, Any]) -> str:
        """Raise Failed, naming the input, where the kernel wrote into one of ``tensors`` (bit for bit, NaN-aware)."""
        for name, value in self.host.items():
            pairs = (
                list(zip(value, tensors[name], strict=True)) if isinstance(value, list) else [(value, tensors[name])]
            )
            for i, (before, tensor) in enumerate(pairs):
                after = np.asarray(tensor.numpy())
                label = f"{name}[{i}]" if isinstance(value, list) else name
                if after.dtype != before.dtype or after.shape != before.shape:
                    raise Failed(
                        f"the kernel changed input {label!r} into {_describe(after)}: it was {_describe(before)}"
                    )
                if after.tobytes() == before.tobytes() or _equal_with_nans(after, before):
                    continue
                same = after == before
                if after.dtype.kind == "f":
                    same |= np.isnan(after) & np.isnan(before)
                changed = np.argwhere(~same)
                first = tuple(int(j) for j in changed[0]) if changed.size else ()
                raise Failed(
                    f"the kernel wrote into input {label!r}: {len(changed)} of {before.size} elements changed (at "
                    f"{list(first)}: {before[first].item()!r} became {after[first].item()!r})"
                )
        return "bit for bit"


def _describe(value: np.ndarray) -> str:
    return f"{value.dtype.name}{list(value.shape)}"


def _equal_with_nans(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype.kind == "f" and bool(np.array_equal(a, b, equal_nan=True))


def example(name: str, index: int, value: Any, rtol: float | None, atol: float | None) -> Example:
    """An :class:`Example` from what the caller gave, or a TypeError saying what an example is."""
    if not isinstance(value, Mapping) or not value:
        raise TypeError(
            f"check_kernel({name!r}): example {index} must be a non-empty mapping of input names to NumPy arrays "
            f"(a list of arrays for a list input), got {type(value).__name__}"
        )
    host: dict[str, Any] = {}
    for key, item in value.items():
        if isinstance(item, list | tuple):
            host[str(key)] = [np.array(v) for v in item]
        elif isinstance(item, np.ndarray | np.generic | int | float | bool):
            host[str(key)] = np.array(item)
        else:
            raise TypeError(
                f"check_kernel({name!r}): input {key!r} of example {index} must be a NumPy array or a list of them, "
                f"got {type(item).__name__}"
            )
    return Example(index, host, rtol, atol)


def outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, list | tuple) else [out]


def kernel_op(name: str, attrs: dict[str, Any], ex: Example) -> Callable[..., Any]:
    """The kernel as a function of its input tensors in order (what ``tp.function`` traces, what is exported)."""
    import tensorplug as tp

    def kernel(*leaves: Any) -> Any:
        return tp.run_kernel(name, ex.rebuild(leaves), attrs)

    kernel.__name__ = kernel.__qualname__ = name
    return kernel


def _case(name: str, ex: Example, op: Callable[..., Any]) -> Case:
    """The case the traced conformance run's comparisons name in their messages (``Swish-example 1``)."""
    return Case(name, op, name=f"example {ex.index}")


# -- the decomposition ---------------------------------------------------------------------------------------------


def decomposition_outputs(name: str, ex: Example, attrs: dict[str, Any]) -> tuple[list[Any] | None, str | None]:
    """The decomposition's outputs on fresh inputs (None and why, where it raised)."""
    import tensorplug as tp
    from tensorplug._runtime._registry import resolve

    spec = tp.decomposition_stack(name)[-1]
    try:
        fn = resolve(spec.fn, f"decomposition of {name!r} (from {spec.source})")
        return outputs(fn(ex.tensors(), dict(attrs))), None
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"


def against_decomposition(
    name: str, own: bool, ex: Example, got: list[Any], decomposed: tuple[list[Any] | None, str | None] | None
) -> str:
    import tensorplug as tp

    if not tp.decomposition_stack(name):
        raise Skipped("the kernel has no decomposition")
    if not own or decomposed is None:
        raise Skipped("the backend runs the decomposition itself")
    want, error = decomposed
    if want is None:
        raise Failed(f"the decomposition raised {error}")
    if len(got) != len(want):
        raise Failed(f"the kernel gives {len(got)} outputs, its decomposition {len(want)}")
    worst = 0.0
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        a, b = np.asarray(g.numpy()), np.asarray(w.numpy())
        if a.dtype != b.dtype or a.shape != b.shape:
            raise Failed(f"output {i}: the kernel gives {_describe(a)}, its decomposition {_describe(b)}")
        rtol, atol = ex.tolerance(a.dtype.name)
        close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True) if a.dtype.kind in "fc" else a == b
        if not np.all(close):
            gap = np.where(close, 0.0, np.abs(a.astype(np.float64) - b.astype(np.float64)))
            gap = np.where(np.isnan(gap), np.inf, gap)
            at = tuple(int(j) for j in np.unravel_index(int(np.argmax(gap)), a.shape)) if a.ndim else ()
            raise Failed(
                f"output {i}: the kernel and its decomposition differ at {int(np.sum(~close))} of {a.size} elements, "
                f"by up to {float(gap[at]):.3g} (at {list(at)}: kernel {a[at].item()!r}, decomposition "
                f"{b[at].item()!r}); rtol {rtol:g}, atol {atol:g}"
            )
        if a.dtype.kind == "f" and a.size:
            worst = max(worst, float(np.nanmax(np.abs(a.astype(np.float64) - b.astype(np.float64)), initial=0.0)))
    return f"max difference {worst:.3g}"


# -- gradients -----------------------------------------------------------------------------------------------------


def differentiable(name: str, ex: Example, got: list[Any]) -> tuple[bool, str]:
    """Whether the kernel is differentiated on this example, and how (or why not)."""
    import tensorplug as tp
    from tensorplug._plugins._overrides import active_gradient

    spec = active_gradient(name)
    if spec is not None and spec.grad is None:
        return False, f"declared not differentiable (by {spec.source})"
    floats = [n for n, v in ex.host.items() for a in (v if isinstance(v, list) else [v]) if a.dtype.kind == "f"]
    if not floats:
        return False, "no floating-point input"
    if not any(o.dtype in ("float32", "float64") for o in got):
        return False, "no floating-point output"
    if spec is not None:
        how = "replayed by eager backprop" if spec.replay else "run as written by eager backprop (replay not declared)"
        return True, f"its gradient (from {spec.source}), {how}"
    if not tp.decomposition_stack(name):
        return False, "no gradient is registered and it has no decomposition to differentiate through"
    if any(isinstance(v, list) for v in ex.host.values()):
        return False, "differentiated through its decomposition, which takes tensor inputs, not lists"
    return True, "through its decomposition"


def gradient(name: str, attrs: dict[str, Any], ex: Example, order: int, how: tuple[bool, str]) -> str:
    """The gradient against finite differences (``check_grads``, to ``order``), output by output."""
    import tensorplug as tp
    from tensorplug.testing import check_grads

    if order == 0:
        raise Skipped("order=0")
    if not how[0]:
        raise Skipped(how[1])
    leaves = ex.leaves()
    op = kernel_op(name, attrs, ex)
    dtype = None
    for i, probe in enumerate(outputs(op(*leaves))):
        if probe.dtype not in ("float32", "float64"):
            continue

        def output(*xs: Any, i: int = i) -> Any:
            return outputs(op(*xs))[i]

        output.__name__ = f"{name} (output {i})"
        try:
            check_grads(output, leaves, order=order, dtype=dtype)
        except tp.TensorplugError as exc:  # the kernel may take its examples' dtype only: check in that one
            own = sorted({a.dtype.name for a in leaves_host(ex) if a.dtype.kind == "f"})
            if dtype is not None or own != ["float32"]:
                raise
            dtype = "float32"
            check_grads(output, leaves, order=order, dtype=dtype)
            how = (how[0], f"{how[1]}; in float32: in float64 it raised {type(exc).__name__}")
    in_dtype = dtype or ("float32" if "float64" in tp.backend().unsupported_dtypes else "float64")
    return f"{how[1]}; order {order}, in {in_dtype}"


def leaves_host(ex: Example) -> list[np.ndarray]:
    found: list[np.ndarray] = []
    for value in ex.host.values():
        found += value if isinstance(value, list) else [value]
    return found


def forget_gradient_programs() -> None:
    from tensorplug._tracing import _gradient_programs

    _gradient_programs.clear()


def replay(name: str, attrs: dict[str, Any], ex: Example) -> str:
    """``tp.function``'s replay of the kernel against eager: its bits, or within ``Backend.compile_ulps``."""
    from tensorplug.testing._traced import _compare_replay

    case = _case(name, ex, kernel_op(name, attrs, ex))
    try:
        ulps = _compare_replay(case, "values", case.op, ex.leaves())
    except NotApplicable as exc:
        raise Skipped(str(exc)) from None
    return f"within {ulps} ulps (compiled)" if ulps else "bit for bit"


def gradient_replay(name: str, attrs: dict[str, Any], ex: Example, how: tuple[bool, str]) -> str:
    """Eager gradients as written, then from the gradient programs (traced, replayed), then ``tp.function``'s
    replay of the gradient: eager's bits each time."""
    from tensorplug.testing._traced import _compare_gradient_programs, _compare_replay, _gradients

    if not how[0]:
        raise Skipped(how[1])
    leaves = ex.leaves()
    positions = [i for i, t in enumerate(leaves) if t.dtype in ("float32", "float64")]
    op = kernel_op(name, attrs, ex)
    case = _case(name, ex, op)
    gradients = _gradients(op, leaves, positions)
    xs = [leaves[i] for i in positions]
    try:
        _compare_gradient_programs(case, gradients, xs)
        ulps = _compare_replay(case, "gradients", gradients, xs)
    except NotApplicable as exc:
        raise Skipped(str(exc)) from None
    return "bit for bit" if not ulps else f"within {ulps} ulps (compiled)"


def override(name: str, attrs: dict[str, Any], ex: Example, how: tuple[bool, str]) -> str:
    """Inside ``tp.gradient_overrides({name: ...})`` the override's gradient, eagerly (as written and from the
    gradient programs) and by ``tp.function`` (traced and replayed); after the scope, the kernel's own again."""
    import tensorplug as tp

    if not how[0]:
        raise Skipped(how[1])
    owners = ex.owners()  # the input each tensor belongs to
    host = leaves_host(ex)
    names = [n for n, v in ex.host.items() if all(a.dtype.kind == "f" for a in (v if isinstance(v, list) else [v]))]
    if not names:
        raise Skipped("no floating-point input")
    leaves = ex.leaves()
    positions = [i for i, owner in enumerate(owners) if owner in names and host[i].dtype.kind == "f"]
    labels = [ex.names()[i] for i in positions]
    op = kernel_op(name, attrs, ex)

    def loss(*xs: Any) -> Any:
        full = list(leaves)
        for i, x in zip(positions, xs, strict=True):
            full[i] = x
        floats = [o for o in outputs(op(*full)) if o.dtype in ("float32", "float64")]
        return tp.add_n([tp.sum(o) for o in floats]) if len(floats) > 1 else tp.sum(floats[0])

    grads = tp.grads(loss, unconnected_gradients="zero")

    def gradients(*xs: Any) -> list[Any]:
        return grads(list(xs))

    def sevens(dy: Any, saved: tuple[Any, ...], attrs: dict[str, Any]) -> dict[str, Any]:
        return {
            n: [tp.ones_like(t) * OVERRIDE for t in x] if isinstance(x, list) else tp.ones_like(x) * OVERRIDE
            for n, x in zip(names, saved, strict=True)
        }

    xs = [leaves[i] for i in positions]
    before = hosts(gradients(*xs))
    traced = tp.function(gradients)
    spec = tp.GradientSpec(name, sevens, tuple(names))
    try:
        scope = tp.gradient_overrides({name: spec})
    except tp.RegistrationError as exc:
        raise Skipped(str(exc)) from None
    with scope:
        _sevens(labels, "eagerly", gradients(*xs))
        _sevens(labels, "by tp.function (traced)", traced(*xs))
        _sevens(labels, "by tp.function (replayed)", traced(*xs))
    with tp.gradient_overrides({name: spec}, replay=True):
        for what in ("as written", "traced into gradient programs", "replayed from gradient programs"):
            _sevens(labels, f"eagerly, replay=True ({what})", gradients(*xs))
    for what, got in (("eagerly", gradients(*xs)), ("by tp.function", traced(*xs))):
        for n, g, b in zip(labels, hosts(got), before, strict=True):
            if g.tobytes() != b.tobytes() and not _equal_with_nans(g, b):
                raise Failed(f"after the override's scope, the gradient of {n!r} {what} is not the kernel's own")
    return f"eagerly and by tp.function, inside and after tp.gradient_overrides({{{name!r}: ...}})"


def hosts(values: Iterable[Any]) -> list[np.ndarray]:
    return [np.asarray(v.numpy()) for v in values]


def _sevens(names: list[str], what: str, got: Sequence[Any]) -> None:
    for n, g in zip(names, hosts(got), strict=True):
        if not np.all(g == OVERRIDE):
            raise Failed(
                f"inside tp.gradient_overrides, the gradient of {n!r} {what} is not the override's ({OVERRIDE} "
                f"everywhere): {np.array2string(g.ravel()[:6], precision=4)}"
            )
