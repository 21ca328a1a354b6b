"""Bad input, property-based: every public op, driven with generated arguments valid and invalid, on numpy.

For each op of the table in tests/bad_input_table.py, hypothesis draws calls (shapes up to rank 6 with
zero-size dimensions, every dtype, axes in and out of range or repeated or of the wrong kind, attrs of the
wrong kind or value, shapes that do not broadcast) and checks that

(a) the op returns tensors, or raises a tensorplug error that is also the matching builtin (ValueError,
    TypeError, ...), whose message names the op and the offending arguments (and the backend, for a
    KernelError); never a raw NumPy/Python exception, and never a warning;
(b) what it returns agrees with a NumPy reference computed in the test, independently of tensorplug (dtype,
    shape and values), and a call that NumPy itself refuses is refused.

The number of examples comes from the hypothesis profile (tests/conftest.py): "ci" by default,
``TENSORPLUG_HYPOTHESIS_PROFILE=long`` for a longer hunt.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import pytest
from bad_input_table import ALIASES, SPECS, Call, OpSpec, Refused, _from_entry, contract_violations, run, unwrapped
from hypothesis import given
from hypothesis import strategies as st

import tensorplug as tp
from tensorplug.kernel_reference import REFERENCE

# With TENSORPLUG_BAD_INPUT_STRICT=1 a call that NumPy accepts and tensorplug refuses fails too (for review:
# tensorplug is stricter than NumPy on purpose in places, refusing bool arithmetic, say).
STRICT = os.environ.get("TENSORPLUG_BAD_INPUT_STRICT") == "1"
TOLERANCE = {"float32": (1e-5, 1e-6), "float64": (1e-12, 1e-12)}


def test_the_table_covers_every_catalogue_kernel() -> None:
    """A new kernel whose op is not in the table fails here, so that no op escapes the bad-input suite."""
    covered = {kernel for spec in SPECS for kernel in spec.kernels}
    catalogue = set(tp.kernel_names.CATALOGUE) | {row.kernel for row in tp.coverage().rows}
    assert sorted(catalogue - covered) == []


def test_every_unary_kernel_is_compared_with_a_numpy_reference() -> None:
    """Its row comes from its kernel reference entry: the op, and the ``numpy`` formula unless the table has one."""
    unary = {entry.name for entry in REFERENCE.values() if entry.family == "unary" and not entry.attrs}
    tabled = {spec.kernels[0]: spec for spec in SPECS if len(spec.kernels) == 1 and spec.kernels[0] in unary}
    assert sorted(tabled) == sorted(unary)
    assert sorted(name for name, spec in tabled.items() if spec.reference is None) == []


def test_a_reference_entry_with_a_numpy_formula_gives_the_kernels_reference() -> None:
    entry = dataclasses.replace(REFERENCE["Tanh"], numpy=lambda x: x / (1 + abs(x)))
    reference = _from_entry(entry)
    assert reference is not None
    got = reference(np.array([1, -3], dtype=np.int32))  # the op casts integer x to float32
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [0.5, -0.75])
    assert _from_entry(dataclasses.replace(entry, numpy=None, samples=None)) is None


def test_the_table_covers_every_public_op() -> None:
    tabled = {spec.name for spec in SPECS}
    for alias, name in ALIASES.items():
        assert getattr(tp, alias) is getattr(tp, name), f"tp.{alias} is no longer tp.{name}: table it"
    assert sorted(set(tp.ops.__all__) - tabled - set(ALIASES)) == []


def compare(spec: OpSpec, call: Call, outputs: list[tp.Tensor], expected: Any) -> None:
    wanted = expected if isinstance(expected, list) else [expected]
    assert len(outputs) == len(wanted), f"{spec.name}{call!r}: {len(outputs)} outputs, the reference has {len(wanted)}"
    for got, want in zip(outputs, wanted, strict=True):
        want = np.asarray(want)
        assert (got.dtype, got.shape) == (want.dtype.name, want.shape), (
            f"{spec.name}{call!r} gave {got.dtype}{list(got.shape)}, NumPy {want.dtype.name}{list(want.shape)}"
        )
        if spec.random:
            continue
        host = got.numpy()
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(host, want, err_msg=f"{spec.name}{call!r}")
        else:
            rtol, atol = TOLERANCE[want.dtype.name]
            np.testing.assert_allclose(host, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{spec.name}{call!r}")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
@given(data=st.data())
def test_op_on_bad_input(spec: OpSpec, data: st.DataObject) -> None:
    call = data.draw(spec.calls, label="call")
    outcome = run(spec, call)
    problems = contract_violations(spec, call, outcome, "numpy")
    assert problems == [], f"tp.{spec.name}{call!r}: {outcome.describe()}: {problems}"
    if spec.reference is None:
        return
    args = tuple(unwrapped(a) for a in call.args)
    kwargs = {k: unwrapped(v) for k, v in call.kwargs.items()}
    try:
        expected = spec.reference(*args, **kwargs)
    except Refused as why:
        refusal = str(why)
    else:
        refusal = None
    if refusal is not None:
        assert outcome.error is not None, f"tp.{spec.name}{call!r}: NumPy refuses ({refusal}), tp {outcome.describe()}"
        return
    if outcome.error is not None:
        assert not STRICT, f"tp.{spec.name}{call!r}: NumPy accepts, tensorplug {outcome.describe()}"
        return
    if expected is not None:
        assert outcome.outputs is not None
        compare(spec, call, outcome.outputs, expected)


def test_split_of_an_empty_axis_into_absurdly_many_parts_is_refused() -> None:
    # Found by the long differential profile: 0 % n == 0 for any n, so the sizes tuple (0,) * 10**20 overflowed
    # with a raw OverflowError. A sane number of empty parts still works.
    with pytest.raises(tp.ShapeError, match="parts of the empty axis 0 of float32"):
        tp.split(tp.zeros((0,)), 10**20)
    assert [p.shape for p in tp.split(tp.zeros((0, 2)), 3)] == [(0, 2)] * 3
