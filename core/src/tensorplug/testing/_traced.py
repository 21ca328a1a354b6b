"""The conformance suite through ``tp.function``: each case traced, replayed, and compared with eager.

A backend's lowering (``Backend.lower_step`` or ``compile``) must give what its kernels give eagerly. For
each case, the op runs eagerly, then as a ``tp.function``: one call traces it, the next replays the
program (through the backend's lowering, or the plain replay), and the replay's outputs must equal the
eager ones bit for bit (NaN where NaN, same dtype and shape), except that a replay made by
``Backend.compile`` may differ by the ``Backend.compile_ulps`` the backend declares (a fusing compiler's
contractions) in its float outputs. A ``grad=True`` case does the same for its
gradients (of the sum of its float outputs, with respect to its float arguments), and first checks that
eager backprop gives the same bits from the core's gradient programs (traced, then replayed) as from the
gradients as written. A case that expects an
error must raise it through ``tp.function`` too; a case whose values are checked by statistics (random
kernels) is checked so on the replay. An op that reads a traced value back to Python cannot be replayed,
and its case is not applicable.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorplug.testing._contract import check_contract

if TYPE_CHECKING:
    from tensorplug.testing._case import Case

__all__ = ["run_traced"]


def run_traced(case: Case, args: list[Any]) -> int:
    """Run ``case`` (its inputs already tensors) eagerly and through ``tp.function``; raise AssertionError
    (naming the case) where the replay differs, or where the backend defines a method removed from the backend
    contract (:func:`~tensorplug.testing.check_contract`), NotApplicable where the op cannot be replayed.

    Returns the largest difference, in units in the last place, accepted between a compiled replay and eager
    (0 when every replay gave eager's bits)."""
    import tensorplug as tp

    try:
        check_contract()
    except AssertionError as exc:
        raise AssertionError(f"{case.id} (traced): {exc}") from None
    if case.raises is not None:
        try:
            _outputs(tp.function(case.op)(*args))
        except case.raises:
            return 0
        raise AssertionError(f"{case.id} (traced): expected {case.raises.__name__}, but tp.function returned")
    ulps = _compare_replay(case, "values", case.op, args)
    if case.grad:
        positions = [i for i, a in enumerate(args) if isinstance(a, tp.Tensor) and a.dtype in ("float32", "float64")]
        if positions:
            gradients = _gradients(case.op, args, positions)
            xs = [args[i] for i in positions]
            _compare_gradient_programs(case, gradients, xs)
            ulps = max(ulps, _compare_replay(case, "gradients", gradients, xs))
    return ulps


def _gradients(op: Callable[..., Any], args: list[Any], positions: list[int]) -> Callable[..., Any]:
    import tensorplug as tp

    def loss(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(positions, xs, strict=True):
            full[i] = x
        floats = [o for o in _outputs(op(*full)) if o.dtype in ("float32", "float64")]
        return tp.add_n([tp.sum(o) for o in floats]) if len(floats) > 1 else tp.sum(floats[0])

    def gradients(*xs: Any) -> Any:
        return tp.grads(loss, unconnected_gradients="zero")(list(xs))

    return gradients


def _compare_replay(case: Case, what: str, fn: Callable[..., Any], args: Sequence[Any]) -> int:
    """Compare the replay of ``fn`` with eager; return the largest difference in ulps accepted (compiled only)."""
    import tensorplug as tp
    from tensorplug.testing._case import NotApplicable

    eager = [np.asarray(o.numpy()) for o in _outputs(fn(*args))]
    traced = tp.function(fn)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", tp.FunctionWarning)
        traced(*args)  # the trace (it runs eagerly)
    for warning in caught:
        if issubclass(warning.category, tp.FunctionWarning) and "cannot be replayed" in str(warning.message):
            raise NotApplicable(f"{case.id} (traced {what}): {warning.message}")
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if traced.trace_count != 1:
        raise AssertionError(f"{case.id} (traced {what}): {traced.trace_count} traces for one signature")
    replayed = _outputs(traced(*args))
    if traced.trace_count != 1:
        raise AssertionError(f"{case.id} (traced {what}): the second call traced again instead of replaying")
    got = [np.asarray(o.numpy()) for o in replayed]
    if case.check is not None and what == "values":
        case.check(*got)
        return 0
    if len(got) != len(eager):
        raise AssertionError(f"{case.id} (traced {what}): {len(got)} outputs, eagerly {len(eager)}")
    allowed: int | None = None  # the ulps this replay may differ by: asked when a replay first differs
    worst = 0
    for i, (g, e) in enumerate(zip(got, eager, strict=True)):
        where = f"{case.id} (traced {what}, output {i})"
        if g.dtype != e.dtype or g.shape != e.shape:
            raise AssertionError(f"{where}: {g.dtype}{list(g.shape)} replayed, {e.dtype}{list(e.shape)} eagerly")
        if g.tobytes() == e.tobytes() or _same_with_nans(g, e):
            continue
        if allowed is None:
            allowed = _compile_ulps(traced, args)
        apart = ulps_apart(g, e)
        if apart is not None and apart <= allowed:
            worst = max(worst, apart)
            continue
        by = "" if apart is None else f" by up to {apart} ulps"
        tolerance = (
            f"a compiled replay may differ by {allowed} (Backend.compile_ulps)"
            if allowed
            else "it must give eager's bits"
        )
        np.testing.assert_array_equal(g, e, err_msg=f"{where}: the replay differs from eager{by}; {tolerance}")
    return worst


def _compile_ulps(traced: Any, args: Sequence[Any]) -> int:
    """The ulps the replay of ``traced`` at ``args`` may differ from eager by: the backend's ``compile_ulps``
    when its ``compile`` makes that replay, else 0 (a step lowering's replay, or the plain one, gives eager's
    bits)."""
    import tensorplug as tp

    backend = tp.backend()
    if backend.compile_ulps <= 0:
        return 0
    try:
        compiled = backend.compile(traced.program(*args)) is not None
    except Exception:  # a compile that raises leaves the plain replay
        return 0
    return backend.compile_ulps if compiled else 0


def ulps_apart(a: np.ndarray, b: np.ndarray) -> int | None:
    """The largest distance, in units in the last place, between the elements of float arrays ``a`` and ``b``
    of one dtype and shape (equal values, NaN and NaN, +0 and -0 are 0 apart); None when they are not float
    arrays or a NaN meets a number.

    >>> ulps_apart(np.float32([1.0, 2.0]), np.nextafter(np.float32([1.0, 2.0]), np.float32(3.0)))
    1
    """
    if a.dtype.kind != "f" or a.dtype != b.dtype or a.shape != b.shape:
        return None
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if not np.array_equal(nan_a, nan_b):
        return None
    if a.size == 0:
        return 0
    bits = np.dtype(f"u{a.dtype.itemsize}")
    sign = bits.type(1 << (8 * a.dtype.itemsize - 1))

    def ordered(x: np.ndarray) -> np.ndarray:
        """``x`` as unsigned integers in the order of the values they encode, one apart for neighbouring floats
        (+0 and -0 alike): the sign bit's value plus the magnitude's bits, or minus them for a negative float."""
        u = np.ascontiguousarray(x).view(bits)
        magnitude = u & ~sign
        keys: np.ndarray = np.where(u & sign, sign - magnitude, sign + magnitude)
        return keys

    ka, kb = ordered(a), ordered(b)
    apart = np.where(ka > kb, ka - kb, kb - ka)
    apart = np.where((a == b) | (nan_a & nan_b), bits.type(0), apart)
    return int(apart.max())


def _compare_gradient_programs(case: Case, gradients: Callable[..., Any], xs: Sequence[Any]) -> None:
    """Eager gradients from no gradient program: the gradients as written, then traced into a program of the
    whole backward pass (at its signature's second sighting), then replayed from it; and again with programs of
    single gradients only: the same bits each time."""
    from tensorplug._tracing import _gradient_programs

    _gradient_programs.clear()
    written = [np.asarray(o.numpy()) for o in _outputs(gradients(*xs))]
    rounds = [
        ("traced into gradient programs", True),
        ("replayed from gradient programs", True),
        ("traced into programs of single gradients", False),
        ("replayed from programs of single gradients", False),
    ]
    for what, whole in rounds:
        _gradient_programs.WHOLE_PASSES = whole
        try:
            got = [np.asarray(o.numpy()) for o in _outputs(gradients(*xs))]
        finally:
            _gradient_programs.WHOLE_PASSES = True
        for i, (g, e) in enumerate(zip(got, written, strict=True)):
            where = f"{case.id} (eager gradients {what}, output {i})"
            if g.dtype != e.dtype or g.shape != e.shape:
                raise AssertionError(f"{where}: {g.dtype}{list(g.shape)}, as written {e.dtype}{list(e.shape)}")
            if g.tobytes() != e.tobytes() and not _same_with_nans(g, e):
                np.testing.assert_array_equal(g, e, err_msg=f"{where}: differs from the gradients as written")


def _same_with_nans(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal, NaN where NaN (a NaN's payload may differ between library paths)."""
    if a.dtype.kind not in "fc":
        return False
    return bool(np.array_equal(a, b, equal_nan=True))


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, list | tuple) else [out]
