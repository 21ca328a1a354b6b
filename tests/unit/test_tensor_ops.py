"""Tensors, dtype inference and promotion, and the ops of the first slice (expected values by hand)."""

from __future__ import annotations

import math
import pickle
import re
import traceback
from typing import Any

import numpy as np
import pytest

import tensorplug as tp


def test_tensor_infers_dtypes_like_tensorflow_js() -> None:
    assert tp.tensor(1.5).dtype == "float32"
    assert tp.tensor([1, 2]).dtype == "int32"
    assert tp.tensor([True, False]).dtype == "bool"
    assert tp.tensor(2**40).dtype == "int64"
    assert tp.tensor(np.zeros(2, np.float64)).dtype == "float64"
    assert tp.tensor(np.zeros(2, np.int64)).dtype == "int64"
    assert tp.tensor(np.zeros(2, np.float16)).dtype == "float32"
    assert tp.tensor([1, 2], dtype="float64").dtype == "float64"


def test_tensor_metadata_and_reading_back() -> None:
    x = tp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert x.shape == (2, 3)
    assert x.ndim == 2
    assert x.size == 6
    assert x.backend == "numpy"
    assert x.device == "cpu"
    assert x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert np.asarray(x).dtype == np.float32
    assert tp.tensor([[7]]).item() == 7
    assert "dtype=float32" in repr(x)
    with pytest.raises(ValueError, match="one element"):
        x.item()


def test_numpy_view_is_read_only_and_input_is_copied() -> None:
    source = np.array([1.0, 2.0], np.float32)
    x = tp.tensor(source)
    source[0] = 100.0
    assert x.tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="read-only"):
        x.numpy()[0] = 5.0


def test_unsupported_data_is_a_dtype_error() -> None:
    with pytest.raises(tp.DTypeError, match="tensor"):
        tp.tensor(["a", "b"])
    with pytest.raises(TypeError):  # DTypeError is a TypeError too
        tp.tensor({"a": 1})
    with pytest.raises(tp.DTypeError, match="unsupported dtype"):
        tp.tensor([1.0], dtype="complex64")


def test_tensor_constructor_is_not_public() -> None:
    with pytest.raises(TypeError, match=r"tp\.tensor"):
        tp.Tensor()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("float32", "float32", "float32"),
        ("int32", "float32", "float32"),  # an integer meeting a float takes the float's dtype (NumPy: float64)
        ("float32", "int32", "float32"),
        ("int64", "float32", "float32"),
        ("int32", "float64", "float64"),
        ("int32", "int64", "int64"),
        ("float32", "float64", "float64"),
        ("bool", "int32", "int32"),
        ("bool", "float32", "float32"),
        ("int64", "float64", "float64"),
    ],
)
def test_promotion_of_two_tensors_follows_tfjs(a: str, b: str, expected: str) -> None:
    result = tp.tensor([1], dtype=a) + tp.tensor([1], dtype=b)
    assert result.dtype == expected
    assert (tp.tensor([1], dtype=a) < tp.tensor([2], dtype=b)).tolist() == [True]


def test_an_integer_meeting_a_float_keeps_its_values_in_the_float() -> None:
    assert (tp.tensor([3], dtype="int32") * tp.tensor([0.5], dtype="float32")).tolist() == [1.5]
    assert tp.concat([tp.tensor([1], dtype="int64"), tp.tensor([2.5], dtype="float32")]).dtype == "float32"


def test_python_scalars_are_weak() -> None:
    assert (tp.tensor([1.0]) * 2.5).dtype == "float32"
    assert (tp.tensor([1.0], dtype="float64") + 1).dtype == "float64"
    assert (tp.tensor([1]) + 2).dtype == "int32"
    assert (tp.tensor([1]) + 2.5).dtype == "float32"
    assert (2 - tp.tensor([1.0])).tolist() == [1.0]
    assert (1 / tp.tensor([4.0])).tolist() == [0.25]


def test_operators_go_through_ops() -> None:
    a = tp.tensor([1.0, 2.0, 3.0])
    b = tp.tensor([4.0, 5.0, 6.0])
    assert (a + b).tolist() == [5.0, 7.0, 9.0]
    assert (a - b).tolist() == [-3.0, -3.0, -3.0]
    assert (a * b).tolist() == [4.0, 10.0, 18.0]
    assert (b / a).tolist() == [4.0, 2.5, 2.0]
    assert (a**2).tolist() == [1.0, 4.0, 9.0]
    assert (-a).tolist() == [-1.0, -2.0, -3.0]
    assert (a < b).tolist() == [True, True, True]
    assert (a >= 2).tolist() == [False, True, True]
    assert (a == 2).tolist() == [False, True, False]
    assert (a != 2).tolist() == [True, False, True]
    assert (a <= 1).tolist() == [True, False, False]
    assert (a > 2).tolist() == [False, False, True]
    assert (tp.ones((2, 3)) @ tp.ones((3, 1))).tolist() == [[3.0], [3.0]]
    assert (np.array([1.0, 1.0, 1.0], np.float32) + a).tolist() == [2.0, 3.0, 4.0]
    assert (tp.tensor([7, -7]) // 2).tolist() == [3, -4]
    assert (tp.tensor([7, -7]) % 3).tolist() == [1, 2]
    assert abs(tp.tensor([-1.5, 2.0])).tolist() == [1.5, 2.0]
    t, f = tp.tensor([True, True, False]), tp.tensor([True, False, False])
    assert (t & f).tolist() == [True, False, False]
    assert (t | f).tolist() == [True, True, False]
    assert (t ^ f).tolist() == [False, True, False]
    assert (~t).tolist() == [False, False, True]


def test_integer_division_is_true_division_in_float32() -> None:
    result = tp.tensor([7, 2]) / tp.tensor([2, 4])
    assert result.dtype == "float32"
    assert result.tolist() == [3.5, 0.5]


def test_broadcasting_and_its_error() -> None:
    assert (tp.ones((2, 1)) + tp.tensor([1.0, 2.0, 3.0])).tolist() == [[2.0, 3.0, 4.0]] * 2
    with pytest.raises(tp.ShapeError, match=r"add: shapes \(2, 3\) and \(4,\).*float32\[2, 3\].*'numpy'"):
        tp.ones((2, 3)) + tp.ones(4)
    with pytest.raises(ValueError, match="cannot be broadcast"):  # ShapeError is a ValueError
        tp.ones((2, 3)) * tp.ones((3, 2))


def test_unary_ops_by_hand() -> None:
    x = tp.tensor([0.0, 1.0, 4.0])
    assert tp.sqrt(x).tolist() == [0.0, 1.0, 2.0]
    assert tp.square(x).tolist() == [0.0, 1.0, 16.0]
    assert tp.exp(tp.tensor([0.0])).tolist() == [1.0]
    assert tp.log(tp.tensor([1.0, 0.0])).tolist() == [0.0, -math.inf]
    assert math.isnan(tp.sqrt(tp.tensor(-1.0)).item())
    assert tp.relu(tp.tensor([-2.0, 0.0, 3.0])).tolist() == [0.0, 0.0, 3.0]
    assert tp.relu(tp.tensor([-2, 5])).dtype == "int32"
    np.testing.assert_allclose(tp.tanh(tp.tensor([0.5])).numpy(), [math.tanh(0.5)], rtol=1e-6)
    sig = tp.sigmoid(tp.tensor([0.0, 100.0, -100.0], dtype="float64")).tolist()
    assert sig[0] == 0.5
    assert sig[1] == pytest.approx(1.0)
    assert sig[2] == pytest.approx(1 / (1 + math.exp(100)), rel=1e-6)
    assert tp.exp(tp.tensor([1])).dtype == "float32"  # integers are computed in float


def test_maximum_and_where() -> None:
    assert tp.maximum(tp.tensor([1.0, 5.0]), tp.tensor([3.0, 2.0])).tolist() == [3.0, 5.0]
    assert math.isnan(tp.maximum(tp.tensor([math.nan]), 1.0).item())
    cond = tp.tensor([[True], [False]])
    assert tp.where(cond, tp.tensor([1.0, 2.0]), 0.0).tolist() == [[1.0, 2.0], [0.0, 0.0]]
    with pytest.raises(tp.DTypeError, match="bool"):
        tp.where(tp.tensor([1.0]), 1.0, 2.0)


def test_reductions() -> None:
    x = tp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert tp.sum(x).item() == 21.0
    assert tp.sum(x, 0).tolist() == [5.0, 7.0, 9.0]
    assert tp.sum(x, -1, keepdims=True).tolist() == [[6.0], [15.0]]
    assert tp.mean(x, 1).tolist() == [2.0, 5.0]
    assert tp.max(x, (0, 1)).item() == 6.0
    assert tp.max(x, 0, keepdims=True).shape == (1, 3)
    assert tp.sum(tp.tensor([1, 2], dtype="int32")).dtype == "int32"
    assert tp.sum(tp.tensor([True, True, False])).tolist() == 2
    assert tp.mean(tp.tensor([1, 2])).dtype == "float32"
    assert tp.sum(tp.zeros((0, 3)), 0).tolist() == [0.0, 0.0, 0.0]
    assert math.isnan(tp.mean(tp.zeros((0,))).item())
    with pytest.raises(tp.ShapeError, match="size 0"):
        tp.max(tp.zeros((0, 2)), 0)
    with pytest.raises(tp.ShapeError, match="out of range"):
        tp.sum(x, 2)
    with pytest.raises(tp.ShapeError, match="repeats"):
        tp.sum(x, (1, -1))


def test_shape_ops() -> None:
    x = tp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert tp.reshape(x, (3, -1)).tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert x.reshape(6).shape == (6,)
    assert tp.transpose(x).tolist() == [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]
    assert x.T.shape == (3, 2)
    assert tp.broadcast_to(tp.tensor([1.0, 2.0]), (2, 2)).tolist() == [[1.0, 2.0], [1.0, 2.0]]
    assert tp.expand_dims(x, 1).shape == (2, 1, 3)
    assert tp.cast(tp.tensor([1.7, -1.7]), "int32").tolist() == [1, -1]
    assert tp.cast(x, "float32") is x
    with pytest.raises(tp.ShapeError, match="cannot reshape"):
        tp.reshape(x, (4, -1))
    with pytest.raises(tp.ShapeError, match="permutation"):
        tp.transpose(x, (0, 0))
    with pytest.raises(tp.ShapeError, match="cannot be broadcast"):
        tp.broadcast_to(x, (3, 3))


def test_creation() -> None:
    assert tp.zeros((2, 2)).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert tp.ones(3, dtype="int64").dtype == "int64"
    assert tp.full((1,), 7).tolist() == [7]
    assert tp.full((1,), 7).dtype == "int32"
    assert tp.fill((2,), True).dtype == "bool"
    assert tp.zeros_like(tp.tensor([1, 2])).tolist() == [0, 0]
    with pytest.raises(tp.ShapeError, match="negative"):
        tp.zeros((-1, 2))


def test_matmul_shapes_batches_and_vectors() -> None:
    a = tp.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = tp.tensor([[5.0, 6.0], [7.0, 8.0]])
    assert tp.matmul(a, b).tolist() == [[19.0, 22.0], [43.0, 50.0]]
    assert tp.matmul(a, b, transpose_a=True).tolist() == [[26.0, 30.0], [38.0, 44.0]]
    assert tp.matmul(a, b, transpose_b=True).tolist() == [[17.0, 23.0], [39.0, 53.0]]
    assert tp.matmul(tp.ones((4, 1, 2, 3)), tp.ones((5, 3, 2))).shape == (4, 5, 2, 2)
    assert tp.matmul(tp.tensor([1.0, 2.0]), a).tolist() == [7.0, 10.0]
    assert tp.matmul(a, tp.tensor([1.0, 1.0])).tolist() == [3.0, 7.0]
    with pytest.raises(tp.ShapeError, match="inner dimensions"):
        tp.matmul(tp.ones((2, 3)), tp.ones((2, 3)))


def test_softmax_and_stable_log_softmax() -> None:
    p = tp.softmax(tp.tensor([[1.0, 1.0], [0.0, math.log(3.0)]]))
    np.testing.assert_allclose(p.numpy(), [[0.5, 0.5], [0.25, 0.75]], rtol=1e-6)
    big = tp.log_softmax(tp.tensor([1000.0, 1000.0]))
    np.testing.assert_allclose(big.numpy(), [-math.log(2.0)] * 2, rtol=1e-6)
    lse = tp.log_sum_exp(tp.tensor([[0.0, 0.0], [1000.0, 1000.0]]), 1)
    np.testing.assert_allclose(lse.numpy(), [math.log(2.0), 1000.0 + math.log(2.0)], rtol=1e-6)
    assert tp.log_sum_exp(tp.zeros((2, 3))).shape == ()


def test_moving_average_as_tensorflow_js() -> None:
    v = tp.tensor([10.0, 10.0, 10.0, 10.0])
    x = tp.tensor([1.0, 2.0, 3.0, 4.0])
    # (x - v) * (1 - 0.6) = [-3.6, -3.2, -2.8, -2.4]; debias divides by 1 - 0.6**1 = 0.4
    np.testing.assert_allclose(tp.moving_average(v, x, 0.6, step=1).numpy(), [1.0, 2.0, 3.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(tp.moving_average(v, x, 0.6, zero_debias=False).numpy(), [6.4, 6.8, 7.2, 7.6], rtol=1e-6)
    # step 2: divide by 1 - 0.36 = 0.64
    np.testing.assert_allclose(
        tp.moving_average(v, x, 0.6, step=2).numpy(),
        [10 - 3.6 / 0.64, 10 - 3.2 / 0.64, 10 - 2.8 / 0.64, 10 - 2.4 / 0.64],
        rtol=1e-5,
    )
    with pytest.raises(tp.TensorplugError, match="step"):
        tp.moving_average(v, x, 0.6)


def test_softmax_cross_entropy_values_and_reductions() -> None:
    labels = tp.tensor([[0.0, 1.0], [1.0, 0.0]])
    logits = tp.tensor([[0.0, 0.0], [0.0, math.log(3.0)]])
    # per example: ln 2, and -ln(1/4) = ln 4
    per_example = tp.losses.softmax_cross_entropy(labels, logits, reduction="none")
    np.testing.assert_allclose(per_example.numpy(), [math.log(2), math.log(4)], rtol=1e-6)
    mean = tp.losses.softmax_cross_entropy(labels, logits)
    assert mean.item() == pytest.approx((math.log(2) + math.log(4)) / 2, rel=1e-6)
    total = tp.losses.softmax_cross_entropy(labels, logits, reduction="sum")
    assert total.item() == pytest.approx(math.log(2) + math.log(4), rel=1e-6)
    weighted = tp.losses.softmax_cross_entropy(labels, logits, weights=tp.tensor([0.0, 2.0]))
    assert weighted.item() == pytest.approx(2 * math.log(4), rel=1e-6)  # one non-zero weight
    smoothed = tp.losses.softmax_cross_entropy(tp.tensor([[0.0, 1.0]]), tp.tensor([[0.0, 0.0]]), label_smoothing=0.5)
    assert smoothed.item() == pytest.approx(math.log(2), rel=1e-6)  # labels become [0.25, 0.75]
    with pytest.raises(tp.ShapeError, match="same shape"):
        tp.losses.softmax_cross_entropy(tp.ones((2, 3)), tp.ones((2, 2)))
    with pytest.raises(tp.TensorplugError, match="reduction"):
        tp.losses.softmax_cross_entropy(labels, logits, reduction="median")  # type: ignore[arg-type]


def test_variables_assign_and_check() -> None:
    w = tp.variable([1.0, 2.0], name="w_assign")
    assert isinstance(w, tp.Tensor)
    w.assign(tp.tensor([3.0, 4.0]))
    assert w.tolist() == [3.0, 4.0]
    w.assign([5.0, 6.0])
    assert w.tolist() == [5.0, 6.0]
    with pytest.raises(tp.ShapeError, match="w_assign"):
        w.assign(tp.tensor([1.0]))
    w.assign(tp.tensor([5.0, 6.0]))
    direct = tp.Variable([1, 2], trainable=False, name="w_direct", dtype="float64")
    assert (direct.name, direct.trainable, direct.dtype) == ("w_direct", False, "float64")
    snapshot = tp.tensor(w)
    w.assign([0.0, 0.0])
    assert snapshot.tolist() == [5.0, 6.0]


def test_assigning_another_dtype_to_a_variable_is_a_dtype_error() -> None:
    w = tp.variable([1.0, 2.0], name="w_dtype")
    with pytest.raises(tp.DTypeError, match=r"w_dtype.*float64\[2\].*float32\[2\].*tp\.cast\(value, 'float32'\)"):
        w.assign(tp.tensor([3.0, 4.0], dtype="float64"))
    with pytest.raises(tp.DTypeError, match="w_dtype"):
        w.assign(tp.tensor([3, 4], dtype="int32"))
    assert (w.dtype, w.tolist()) == ("float32", [1.0, 2.0])  # nothing changed
    with pytest.raises(tp.ShapeError, match="w_dtype"):  # another shape is still a ShapeError
        w.assign(tp.tensor([1.0]))


def test_tensors_and_variables_pickle_under_their_public_names() -> None:
    x = tp.tensor([1.0, 2.0])
    w = tp.variable([3.0, 4.0], name="w", trainable=False)
    for value in (x, w):
        data = pickle.dumps(value)
        assert b"tensorplug._" not in data  # found again as tp.Tensor / tp.Variable, wherever the classes live
        back = pickle.loads(data)
        assert type(back) is type(value)
        assert back.tolist() == value.tolist()
    back_w = pickle.loads(pickle.dumps(w))
    assert isinstance(back_w, tp.Tensor)
    assert (back_w.name, back_w.trainable) == ("w", False)
    assert repr(tp.Tensor) == "<class 'tensorplug.Tensor'>"
    assert repr(tp.Variable) == "<class 'tensorplug.Variable'>"


def test_errors_show_and_pickle_under_their_public_names() -> None:
    with pytest.raises(tp.ShapeError) as caught:
        tp.tensor([1.0]).reshape(3)
    assert traceback.format_exception_only(caught.value)[-1].startswith("tensorplug.ShapeError: reshape: ")
    back = pickle.loads(pickle.dumps(caught.value))
    assert type(back) is tp.ShapeError
    assert back.args == caught.value.args
    assert [e.__module__ for e in (tp.TensorplugError, tp.PluginError, tp.FallbackWarning)] == ["tensorplug"] * 3


def test_an_axis_that_is_not_ints_gets_the_ops_error_even_when_unhashable() -> None:
    # normalized axes are cached, keyed by the axis: an unhashable one must still reach the op's own check
    with pytest.raises(TypeError, match=r"sum: axis must be an int, a sequence of ints, or None; got \(\[0\],\)"):
        tp.sum(tp.ones((2, 3)), axis=([0],))


@pytest.mark.parametrize(
    ("shape", "error", "says"),
    [
        ((True, 2), tp.DTypeError, "shape must be an int or a sequence of ints, got (True, 2)"),
        ((2, -3), tp.ShapeError, "shape (2, -3) has a negative dimension"),
        ((2**31, 2**30), tp.ShapeError, "more elements than any backend can address"),
        ((2.0, 1), tp.DTypeError, "shape must be an int or a sequence of ints, got (2.0, 1)"),
    ],
)
def test_shape_tuples_that_are_not_plain_sizes_are_still_checked(shape: Any, error: type, says: str) -> None:
    # Tuples of plain non-negative ints skip the general conversion; anything else still meets every check.
    with pytest.raises(error, match=re.escape(says)):
        tp.broadcast_to(tp.tensor([1.0, 2.0]), shape)


def test_shape_tuples_of_numpy_ints_become_python_ints() -> None:
    shape = tp.broadcast_to(tp.tensor([1.0, 2.0]), (np.int64(3), np.int32(2))).shape
    assert shape == (3, 2)
    assert all(type(d) is int for d in shape)


def test_every_operator_and_method_declared_for_type_checkers_is_attached_by_the_ops_layer() -> None:
    """Tensor declares its ops-made operators and methods under TYPE_CHECKING (for mypy and editors); the ops
    layer attaches them: the two lists are one, and each attached one is Tensor's (so Variable's) at run time."""
    import ast
    import inspect

    from tensorplug._runtime import _tensor
    from tensorplug.ops._tensor_methods import METHODS

    tree = ast.parse(inspect.getsource(_tensor))
    (tensor_class,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor"]
    declared = {
        f.name
        for block in tensor_class.body
        if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
        for f in block.body
        if isinstance(f, ast.FunctionDef)
    }
    assert declared == set(METHODS)
    for name, method in METHODS.items():
        assert tp.Tensor.__dict__[name] is method
        assert getattr(tp.Variable, name) is method
