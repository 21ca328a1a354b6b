"""How the numpy backend runs each step of a ``tp.function`` program (``NumpyBackend.lower_step``).

The core's passes do the rest (folding, freeing, writing dead buffers, generating the replay); this module is
a table: a step whose kernel is one of this plugin's own kernels becomes the NumPy call that kernel's code
makes (every elementwise kernel made by the plugin's factories, as the function it applies: ``Add`` is
``np.add(a, b)``; and a few rules for kernels whose call depends on attrs: ``Sum`` is ``np.add.reduce(x, axis,
keepdims=..., dtype=x.dtype)``), so the results are the kernel's bit for bit: only the kernel wrapper, its
inputs dict and its attrs lookups go. A kernel registered by anyone else that declares the function it applies
(``kernel.applies``: ``tensorplug.kernel_factories.unary(np.tanh)``) runs as that function too, a NumPy ufunc
exactly as the plugin's own (with ``into``).
Every other step (one with a fast path or dtype rules of its own, an override, a fallback) calls its kernel.
Nothing fuses, so no arithmetic changes. The whole replay runs in the kernels' quiet floating-point context
(``_factories.quiet_context``), entered once per call: the direct calls give inf and NaN without a warning,
as the kernels do.

Dead buffers: an elementwise step of at least ``_MIN_REUSE_SIZE`` elements offers ``into``, which writes its
result into the dead input the core picked when every operand is C-contiguous (checked at each call), so
that the result has the layout a fresh array would have had: later reductions and matmuls see the same memory
order, hence the same bits.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.kernel_factories import applied_function, applied_functions
from tensorplug_numpy import _binary, _linalg, _reduction, _shape, _unary
from tensorplug_numpy._factories import quiet_context

ELEMENTWISE = applied_functions(_unary, _binary)
"""This plugin's elementwise kernels made by its factories (``unary``, ``binary``, ``exact_unary``...) -> the
function each applies to its inputs (``x``, or ``a`` and ``b``), nothing else: ``Add`` is ``np.add``."""

Rule = Callable[[tp.Program, tp.Step], "tp.StepLowering | tp.Constant"]


def _reduce(ufunc: np.ufunc, keep_dtype: bool) -> Rule:
    def rule(program: tp.Program, step: tp.Step) -> tp.StepLowering:
        kwargs = {"axis": step.attrs["axis"], "keepdims": step.attrs["keep_dims"]}
        if keep_dtype:  # the kernel passes dtype=x.dtype
            kwargs["dtype"] = np.dtype(program.specs[step.input_registers[0]].dtype)
        return tp.StepLowering(ufunc.reduce, kwargs=kwargs, pure=True, reads_only=True)

    return rule


def _matmul(program: tp.Program, step: tp.Step) -> tp.StepLowering:
    transpose_a, transpose_b = step.attrs["transpose_a"], step.attrs["transpose_b"]
    if not (transpose_a or transpose_b):
        return tp.StepLowering(np.matmul, pure=True, fresh=True, reads_only=True)

    a_shape, b_shape = (program.specs[r].shape for r in step.input_registers)
    if a_shape is not None and b_shape is not None and len(a_shape) == len(b_shape) == 2:
        # two matrices: .T (an attribute) makes the view swapaxes makes, with less to call
        return tp.StepLowering(_MATRIX_PRODUCTS[transpose_a, transpose_b], pure=True, fresh=True, reads_only=True)

    def matmul(a: np.ndarray, b: np.ndarray) -> Any:
        return np.matmul(np.swapaxes(a, -1, -2) if transpose_a else a, np.swapaxes(b, -1, -2) if transpose_b else b)

    return tp.StepLowering(matmul, pure=True, fresh=True, reads_only=True)


def _product_ta(a: np.ndarray, b: np.ndarray) -> Any:
    return np.matmul(a.T, b)


def _product_tb(a: np.ndarray, b: np.ndarray) -> Any:
    return np.matmul(a, b.T)


def _product_tab(a: np.ndarray, b: np.ndarray) -> Any:
    return np.matmul(a.T, b.T)


_MATRIX_PRODUCTS = {(True, False): _product_ta, (False, True): _product_tb, (True, True): _product_tab}
"""The products of two matrices with one or both transposed."""


def _filled(make: Callable[..., np.ndarray], like: Callable[..., np.ndarray]) -> Rule:
    def rule(program: tp.Program, step: tp.Step) -> tp.StepLowering | tp.Constant:
        spec = program.specs[step.outputs[0]]
        if spec.shape is not None and len(spec.shape) <= 1:  # no second dimension, so no memory order to keep
            return tp.Constant(make(spec.shape, spec.dtype))  # the seed of every gradient: made once
        return tp.StepLowering(like)

    return rule


def _view(function: Callable[..., np.ndarray]) -> Rule:
    def rule(program: tp.Program, step: tp.Step) -> tp.StepLowering:
        return tp.StepLowering(function, args=(step.attrs["shape"],), pure=True)

    return rule


RULES: dict[Any, Rule] = {
    _reduction.sum_: _reduce(np.add, keep_dtype=True),
    _reduction.max_: _reduce(np.maximum, keep_dtype=False),
    _reduction.min_: _reduce(np.minimum, keep_dtype=False),
    _unary.relu: lambda program, step: tp.StepLowering(np.maximum, args=(0,), pure=True, fresh=True, reads_only=True),
    _linalg.batch_mat_mul: _matmul,
    _shape.ones_like: _filled(np.ones, np.ones_like),
    _shape.zeros_like: _filled(np.zeros, np.zeros_like),
    _shape.reshape: _view(np.reshape),
    _shape.broadcast_to: _view(np.broadcast_to),
}
"""Kernel function -> how its step runs, for the kernels whose call depends on the step's attrs or specs."""

PURE = {_reduction.mean, _reduction.prod, _shape.transpose, _shape.cast, _shape.identity, _shape.fill, _unary.step}
"""Kernels kept as kernel calls whose result is a function of their inputs and attrs only (folded when their
inputs are constants)."""

_PURE_CALL = tp.StepLowering(pure=True)
_MIN_REUSE_SIZE = 1 << 14
"""Elements from which a dead buffer is written into: below it, a fresh allocation is as cheap as the check."""


def lower_step(program: tp.Program, index: int) -> tp.StepLowering | tp.Constant | None:
    step = program.steps[index]
    assert isinstance(step, tp.Step)
    function = step.function
    rule = RULES.get(function)
    if rule is not None:
        return rule(program, step)
    fn = ELEMENTWISE.get(function)
    declared = fn or applied_function(function)  # any kernel that declares the function it applies: a user's too
    if isinstance(declared, np.ufunc):  # a new array (0-d inputs aside), and no reference to its inputs kept
        large = program.specs[step.outputs[0]].size >= _MIN_REUSE_SIZE
        into = functools.partial(_into, declared) if large else None
        return tp.StepLowering(declared, pure=True, fresh=True, reads_only=True, into=into)
    if fn is not None:  # a function of the plugin's own (sigmoid, sign...): pure, but it may return a view
        return tp.StepLowering(fn, pure=True)
    if declared is not None:  # another's function: called as the kernel would call it, nothing more is known
        return tp.StepLowering(declared)
    return _PURE_CALL if function in PURE else None


def wrap_replay(replay: tp.Replay) -> tp.Replay:
    """``replay`` run in the quiet floating-point context, as each kernel is (``__wrapped__`` is ``replay``)."""

    @functools.wraps(replay)
    def quiet_replay(A: Sequence[Any], V: Sequence[Any], H: Sequence[Any]) -> Any:  # noqa: N803 (the replay's names)
        runner = quiet_context()
        if runner is None:
            return replay(A, V, H)
        return runner.run(replay, A, V, H)

    return quiet_replay


def _into(ufunc: np.ufunc, out: np.ndarray, *operands: np.ndarray) -> Any:
    """``ufunc(*operands)`` written into ``out`` when every operand is C-contiguous (so a fresh result would be
    C-contiguous too, as ``out`` is); else into a fresh array, as the kernel does."""
    for operand in operands:
        if not operand.flags.c_contiguous:  # out is one of them
            return ufunc(*operands)
    return ufunc(*operands, out=out)
