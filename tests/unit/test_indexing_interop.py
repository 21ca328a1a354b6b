"""Tensor indexing against NumPy's, the numpy-like repr/str/format, and numpy/DLPack interop (numpy backend only).

Expected values come from NumPy indexing the same array, or are written out by hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.ops._slicing import slice_spec
from tensorplug_numpy._backend import NumpyBackend
from tensorplug_numpy._shape import strided_slice as numpy_strided_slice

A = np.arange(1, 2 * 3 * 4 * 5 + 1, dtype=np.float32).reshape(2, 3, 4, 5)

_ = slice(None)
BASIC_KEYS: list[Any] = [
    0,
    -1,
    1,
    (0, 1),
    (1, -1, 2, -5),
    (_, 0),
    (Ellipsis, 1),
    (0, Ellipsis),
    (Ellipsis,),
    Ellipsis,
    (),
    None,
    (None, 0, None),
    (_, None, _, None),
    (Ellipsis, None),
    slice(1, None),
    slice(None, None, -1),
    slice(5, 1),
    slice(-100, 100),
    slice(100, -100, -1),
    (slice(1, None, -1),),
    (_, slice(None, None, 2), slice(3, 0, -2)),
    (slice(None, None, -2), Ellipsis, slice(10, -10, -1)),
    (_, _, _, slice(-2, None)),
    (_, slice(0, 0)),
    (1, Ellipsis, None, slice(-1, -4, -1)),
    (np.int64(1), np.int32(-2)),
    (np.array(1), _, 2),
]
ARRAY_KEYS: list[Any] = [
    [1, 0],
    [[1], [0]],
    [],
    (_, [2, 0, 2, 1]),
    (_, np.array([-1, 0])),
    (Ellipsis, [4, -5]),
    (0, _, [1, 2]),  # int and array apart: NumPy puts the array's dimensions first
    (_, 0, [1, 2]),  # side by side: they stay in place
    (0, None, [1, 2]),
    (0, [1, 2], None),
    (0, Ellipsis, [1, 2]),
    (Ellipsis, 0, [1, 2]),
    ([1, 0], Ellipsis, 0, _),
    (_, [[0, 1], [1, 2]], 0),
    (_, 0, Ellipsis, [1, 2, 0], _),  # an ellipsis over no axis still separates them
    (slice(None, None, -1), [2, 0], slice(1, 3)),
    (None, [1], None),
    (_, _, [], 0),
    (np.array([True, False]),),
    (_, [False, True, True]),
    ((1, 0),),
]


def _check(key: Any, x: np.ndarray = A) -> None:
    expected = x[key]
    got = tp.tensor(x)[key]
    assert got.shape == expected.shape
    assert got.dtype == tp.tensor(x).dtype
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("key", BASIC_KEYS + ARRAY_KEYS, ids=repr)
def test_indexing_matches_numpy(key: Any) -> None:
    _check(key)


@pytest.mark.parametrize("key", [(), Ellipsis, None, (None, Ellipsis, None)], ids=repr)
def test_indexing_a_0d_tensor_matches_numpy(key: Any) -> None:
    _check(key, np.array(2.5, np.float32))


@pytest.mark.parametrize(
    ("shape", "key"),
    [
        ((2, 0), 0),
        ((2, 0), (-1, slice(None, None, -1))),
        ((2, 0), (_, 0)),  # NumPy: out of bounds
        ((0, 3), 0),  # NumPy: out of bounds
        ((0, 3), slice(1, 2)),
        ((0, 3), (Ellipsis, None, 1)),
        ((0, 3), []),
        ((2, 0, 3), (_, _, [2, 0])),
        ((2, 0, 3), (1, Ellipsis, [-1])),
    ],
    ids=repr,
)
def test_indexing_zero_size_tensors_matches_numpy(shape: tuple[int, ...], key: Any) -> None:
    x = np.zeros(shape, np.int64)
    try:
        x[key]
    except IndexError:
        with pytest.raises(tp.IndexingError, match="out of bounds"):
            tp.tensor(x)[key]
    else:
        _check(key, x)


def test_indices_may_be_int_tensors_with_negative_values() -> None:
    x = tp.tensor(A)
    np.testing.assert_array_equal(x[tp.tensor([1, -1, 0])].numpy(), A[[1, -1, 0]])
    np.testing.assert_array_equal(x[:, tp.tensor([[0], [-2]], dtype="int64")].numpy(), A[:, [[0], [-2]]])
    np.testing.assert_array_equal(x[1, _, tp.tensor(-1), 2].numpy(), A[1, :, -1, 2])
    np.testing.assert_array_equal(x[0, _, tp.tensor([3, 1])].numpy(), A[0, :, [3, 1]])


@pytest.mark.usefixtures("tensorplug_registries")
def test_basic_keys_dispatch_one_canonical_strided_slice() -> None:
    seen: list[dict[str, Any]] = []

    def recording(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        seen.append(attrs)
        return numpy_strided_slice(inputs, attrs, backend)

    tp.register_kernel(K.STRIDED_SLICE, "numpy", recording, override=True)
    for key in BASIC_KEYS:
        seen.clear()
        y = tp.tensor(A)[key]
        assert len(seen) == 1, key
        # canonical: resolving the attrs again gives them back, and they describe NumPy's result
        spec = slice_spec("test", A.shape, seen[0])
        assert spec.attrs == seen[0], key
        assert spec.shape == y.shape == A[key].shape, key


def test_repeated_keys_give_the_same_result() -> None:  # the attrs of basic keys are cached per (shape, key)
    x = tp.tensor(A)
    for _round in range(3):
        for key in (0, -1, slice(1, None), (0, slice(None, None, -1)), (None, Ellipsis, 2)):
            np.testing.assert_array_equal(x[key].numpy(), A[key])
    np.testing.assert_array_equal(tp.tensor(A[:, :2])[0].numpy(), A[0, :2])  # same key, other shape
    y = tp.tensor(A[0, 0])
    for key in (slice(1, 3), (1, 3, None), ((1, 3, None),), (1, 3), slice(1.0, 3)):
        try:
            expected = A[0, 0][key]
        except (IndexError, TypeError) as exc:
            numpy_error: type[Exception] = type(exc)
        else:
            np.testing.assert_array_equal(y[key].numpy(), expected)
            continue
        with pytest.raises(numpy_error):
            y[key]


# -- generated keys against NumPy ------------------------------------------------------

_bounds = st.one_of(st.none(), st.integers(-6, 6))
_slices = st.builds(slice, _bounds, _bounds, st.one_of(st.none(), st.integers(-3, 3).filter(bool)))
_named = st.one_of(st.integers(-4, 3), _slices)  # entries that index one axis each
_arrays = st.one_of(
    st.lists(st.integers(-3, 2), max_size=3),
    st.lists(st.lists(st.integers(-3, 2), min_size=2, max_size=2), min_size=1, max_size=2),
)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[np.ndarray, Any, str]:
    """A shape of rank 0 to 4 (zero-size dims included), and a key of basic entries with at most one array.

    Mostly valid keys; some index one axis too many, repeat the ellipsis, or go out of bounds.
    """
    shape = tuple(draw(st.lists(st.sampled_from([0, 1, 2, 3, 4, 3, 4]), max_size=4)))
    x = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    count = draw(st.integers(0, len(shape))) + (draw(st.integers(0, 9)) == 0)  # one too many, now and then
    entries: list[Any] = draw(st.lists(_named, min_size=count, max_size=count))
    if entries and draw(st.integers(0, 2)):
        entries[draw(st.integers(0, len(entries) - 1))] = draw(_arrays)
    for extra in draw(st.lists(st.sampled_from([None, None, Ellipsis]), max_size=3)):
        entries.insert(draw(st.integers(0, len(entries))), extra)
    form = draw(st.sampled_from(["list", "numpy", "tensor"]))
    key: Any = tuple(entries)
    if len(entries) == 1 and draw(st.booleans()):
        key = entries[0]
    return x, key, form


def _as_form(key: Any, form: str) -> Any:
    """The key with its array (a list) given as a list, a numpy array or an int tensor."""

    def convert(item: Any) -> Any:
        if not isinstance(item, list) or form == "list":
            return item
        array = np.array(item, dtype=np.int64)
        return array if form == "numpy" else tp.tensor(array)

    return tuple(convert(item) for item in key) if isinstance(key, tuple) else convert(key)


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_generated_keys_match_numpy(case: tuple[np.ndarray, Any, str]) -> None:
    x, key, form = case
    try:
        expected = x[key]
    except IndexError:
        with pytest.raises(tp.IndexingError):
            tp.tensor(x)[_as_form(key, form)]
        return
    got = tp.tensor(x)[_as_form(key, form)]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy(), expected)


# -- gradients -----------------------------------------------------------------------------

_GRAD_KEYS: list[Any] = [
    1,
    -1,
    (slice(1, None), slice(None, None, -1)),
    (Ellipsis, slice(None, None, -2), None),
    (None, 0, slice(3, 0, -2)),
    (_, [2, 0, 2]),  # a repeated index: its gradients add up
    ([1, 0], _, 0),  # apart: gathered and then transposed
    (1, [[0, 1], [2, 2]]),
    (_, slice(0, 0)),
]


@pytest.mark.parametrize("key", _GRAD_KEYS, ids=repr)
def test_indexing_is_differentiable(key: Any) -> None:
    x = tp.tensor(np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4))
    tp.testing.check_grads(lambda t: t[key], [x], order=2)


def test_gradient_of_indexing_by_hand() -> None:
    x = tp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    g = tp.grad(lambda t: tp.sum(t[:, [2, 0, 2]] * 2.0) + tp.sum(t[1, ::-2]))(x)
    assert g.tolist() == [[2.0, 0.0, 4.0], [3.0, 0.0, 5.0]]
    g = tp.grad(lambda t: tp.sum(t[tp.tensor([-1, -1])]))(x)
    assert g.tolist() == [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]]


# -- errors, iteration, immutability -------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (2, "index 2 is out of bounds for axis 0 with size 2"),
        ((0, -4), "index -4 is out of bounds for axis 1 with size 3"),
        ((0, 0, 0, 0, 0), "too many indices"),
        ((Ellipsis, 0, Ellipsis), "single ellipsis"),
        (([0], _, [1]), "tp.gather_nd"),
        (1.5, "not a valid index"),
        ("a", "not a valid index"),
        (True, "boolean scalar"),
        ([0.5], "not a valid index"),
        (np.array([[True, False], [False, True]]), "np.argwhere"),
        ([True], "boolean index did not match"),
        ((_, [3]), "index 3 is out of bounds for axis 1 with size 3"),
    ],
    ids=repr,
)
def test_bad_indices_raise_an_index_error_saying_what_is_supported(key: Any, message: str) -> None:
    with pytest.raises(tp.IndexingError, match=message) as info:
        tp.tensor(A)[key]
    assert isinstance(info.value, IndexError)
    assert "float32[2, 3, 4, 5]" in str(info.value)


def test_tensor_index_errors() -> None:
    x = tp.tensor(A)
    with pytest.raises(tp.IndexingError, match="out of bounds"):
        x[tp.tensor([0, 2])]
    with pytest.raises(tp.IndexingError, match=r"tp\.where"):
        x[tp.tensor([True, False])]
    with pytest.raises(tp.IndexingError, match="int32 or int64"):
        x[tp.tensor([0.0])]
    with pytest.raises(ValueError, match="step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError, match="slice bounds must be ints"):
        x[1.5:]


def test_iteration_goes_over_the_first_axis() -> None:
    x = tp.tensor([[1, 2], [3, 4], [5, 6]])
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4], [5, 6]]
    a, b = tp.tensor([7.0, 8.0])
    assert (a.item(), b.item()) == (7.0, 8.0)
    assert list(tp.tensor(np.zeros((0, 3)))) == []
    with pytest.raises(TypeError, match="0-d"):
        iter(tp.tensor(1.0))
    with pytest.raises(tp.UnsupportedOperationError, match="0-d"):
        len(tp.tensor(1.0))


def test_membership() -> None:
    x = tp.tensor([[1, 2], [3, 4]])
    assert 3 in x
    assert 7 not in x
    assert tp.tensor([3, 4]) in x


def test_tensors_refuse_item_assignment_and_say_what_to_use() -> None:
    x = tp.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match="immutable") as info:
        x[0] = 5.0
    assert isinstance(info.value, tp.TensorplugError)
    for alternative in ("tp.where", "tp.scatter_nd", "Variable.assign"):
        assert alternative in str(info.value)
    assert x.tolist() == [1.0, 2.0]


# -- repr, str, format -----------------------------------------------------------------------


def test_repr_is_numpys_with_the_dtype() -> None:
    assert repr(tp.tensor([[1.0, 2.0], [3.0, 4.0]])) == "tensor([[1., 2.],\n        [3., 4.]], dtype=float32)"
    assert repr(tp.tensor(3.5)) == "tensor(3.5, dtype=float32)"
    assert repr(tp.tensor([1, 2], dtype="int64")) == "tensor([1, 2], dtype=int64)"
    assert repr(tp.tensor([True, False])) == "tensor([ True, False], dtype=bool)"
    assert repr(tp.tensor(np.zeros(0))) == "tensor([], dtype=float64)"
    assert repr(tp.tensor(np.zeros((2, 0), np.int32))) == "tensor([], shape=(2, 0), dtype=int32)"


def test_repr_summarises_big_tensors_as_numpy_does() -> None:
    text = repr(tp.tensor(np.arange(5000, dtype=np.int32)))
    assert text == "tensor([   0,    1,    2, ..., 4997, 4998, 4999], dtype=int32)"
    wide = repr(tp.tensor(np.full((2, 30), 1000.5)))
    assert wide.endswith("]],\n       dtype=float64)") or wide.endswith("]], dtype=float64)")
    assert all(len(line) <= 75 for line in wide.splitlines())


def test_variable_repr_keeps_its_name() -> None:
    assert repr(tp.variable([1.0, 2.0], name="w")) == "variable([1., 2.], dtype=float32, name='w')"
    frozen = tp.variable([1], name="steps", trainable=False)
    assert repr(frozen) == "variable([1], dtype=int32, name='steps', trainable=False)"


class _FakeDevice(NumpyBackend):
    """A numpy backend that says its memory is on a GPU (for the repr and copy rules)."""

    name = "fakegpu"
    device = "cuda:7"


def test_repr_names_another_backend_and_a_device() -> None:
    tp.register_backend("fakegpu", _FakeDevice, priority=-100, fallback="numpy")
    t = tp.tensor([1.0, 2.0]).to_backend("fakegpu")
    assert repr(t) == "tensor([1., 2.], dtype=float32, backend='fakegpu', device='cuda:7')"
    tp.set_backend("fakegpu")
    assert repr(t) == "tensor([1., 2.], dtype=float32, device='cuda:7')"
    assert repr(tp.tensor([1.0]).to_backend("numpy")) == "tensor([1.], dtype=float32, backend='numpy')"


def test_str_and_format() -> None:
    x = tp.tensor([[1.0, 2.5], [3.0, 4.0]])
    assert str(x) == "[[1.  2.5]\n [3.  4. ]]"
    assert str(tp.tensor(2)) == "2"
    assert f"{x}" == str(x)
    assert f"{tp.tensor(2.0):.3f}" == "2.000"
    assert f"{tp.tensor([[7]]):>4d}" == "   7"
    assert f"{x[1, 0]:.1e}" == "3.0e+00"
    with pytest.raises(TypeError, match="one-element"):
        f"{x:.2f}"


def test_disposed_tensors_print_as_such() -> None:
    t = tp.tensor([1.0])
    t.dispose()
    assert repr(t) == "<disposed tensor>"
    assert str(t) == "<disposed tensor>"


# -- numpy interop: __array__ and the copy protocol -------------------------------------------------


def test_asarray_is_a_read_only_view() -> None:
    t = tp.tensor([1.0, 2.0])
    a = np.asarray(t)
    assert np.shares_memory(a, t.numpy())
    assert not a.flags.writeable
    assert np.asarray(t, copy=False).base is not None


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_numpy_from_dlpack_is_a_read_only_view(dtype: str) -> None:
    t = tp.tensor(np.arange(3).astype(dtype))
    view = np.from_dlpack(t)
    assert np.shares_memory(view, t.numpy())
    assert not view.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1
    assert np.from_dlpack(t, copy=True).flags.writeable  # a copy is the caller's own
    assert type(t.__dlpack__()).__name__ == "PyCapsule"  # consumers older than DLPack 1.0 still get the memory


def test_array_copies_when_asked_and_converts_dtypes() -> None:
    t = tp.tensor([1.0, 2.0])
    a = np.array(t)
    assert a.flags.writeable
    assert not np.shares_memory(a, t.numpy())
    a[0] = 9.0
    assert t.tolist() == [1.0, 2.0]
    b = np.asarray(t, dtype=np.float64)
    assert b.dtype == np.float64
    assert b.tolist() == [1.0, 2.0]


def test_asarray_copy_false_refuses_to_copy() -> None:
    t = tp.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="needs a copy") as info:
        np.asarray(t, dtype=np.float64, copy=False)
    assert isinstance(info.value, tp.CopyError)
    tp.register_backend("fakegpu", _FakeDevice, priority=-100, fallback="numpy")
    on_device = t.to_backend("fakegpu")
    with pytest.raises(tp.CopyError, match="device memory"):
        np.asarray(on_device, copy=False)
    assert np.asarray(on_device).tolist() == [1.0, 2.0]


# -- tensor() and from_dlpack() of foreign data ------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_tensor_copies_numpy_arrays_and_from_dlpack_shares_them(dtype: str) -> None:
    source = np.arange(4).astype(dtype)
    copied, shared = tp.tensor(source), tp.from_dlpack(source)
    assert copied.dtype == shared.dtype == dtype
    assert not np.shares_memory(copied.numpy(), source)
    assert np.shares_memory(shared.numpy(), source)


def test_tensor_of_a_tensor_on_another_backend_moves_it_to_the_active_one() -> None:
    tp.register_backend("fakegpu", _FakeDevice, priority=-100, fallback="numpy")
    elsewhere = tp.tensor([1, 2]).to_backend("fakegpu")
    here = tp.tensor(elsewhere)
    assert (here.backend, here.tolist()) == ("numpy", [1, 2])
    assert elsewhere.backend == "fakegpu"
    assert tp.tensor(elsewhere, dtype="float64").tolist() == [1.0, 2.0]


class _DeviceProducer:
    """A DLPack producer whose memory is on a (pretend) CUDA device: it exports to the host only when asked."""

    def __init__(self, values: np.ndarray, *, honours_dl_device: bool = True, has_cpu: bool = False) -> None:
        self.values = values
        self.honours_dl_device = honours_dl_device
        self.requests: list[dict[str, Any]] = []
        if has_cpu:
            self.cpu = lambda: self.values.copy()

    def __dlpack_device__(self) -> tuple[int, int]:
        return (2, 0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        self.requests.append(kwargs)
        if tuple(kwargs.get("dl_device") or ()) == (1, 0):
            if self.honours_dl_device:
                return self.values.copy().__dlpack__()
            raise BufferError("device memory cannot be exported to the host")
        # for a consumer on the same device: in place, or a copy when asked (DLPack's copy=True)
        return (self.values.copy() if kwargs.get("copy") else self.values).__dlpack__()


def test_device_producers_are_copied_to_the_host_for_a_host_backend() -> None:
    producer = _DeviceProducer(np.array([1.5, 2.5], np.float32))
    for make in (tp.tensor, tp.from_dlpack):
        t = make(producer)
        assert (t.dtype, t.tolist()) == ("float32", [1.5, 2.5])
    assert any(tuple(r.get("dl_device") or ()) == (1, 0) for r in producer.requests)
    assert tp.tensor(_DeviceProducer(np.array([3]), honours_dl_device=False, has_cpu=True)).tolist() == [3]
    with pytest.raises(tp.BackendError, match="device memory") as info:
        tp.from_dlpack(_DeviceProducer(np.array([3]), honours_dl_device=False))
    assert "on cuda:0" in str(info.value)


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")  # fakegpu casts on numpy
def test_device_producers_stay_on_the_device_for_a_backend_there() -> None:
    tp.register_backend("fakegpu", _FakeDevice, priority=-100, fallback="numpy")
    tp.set_backend("fakegpu")
    values = np.array([1.0, 2.0])
    producer = _DeviceProducer(values, honours_dl_device=False)
    shared = tp.from_dlpack(producer)
    assert np.shares_memory(shared.numpy(), values)
    copied = tp.tensor(producer)  # asked for with DLPack's copy=True, made where the memory lives
    assert producer.requests[-1]["copy"] is True
    assert not np.shares_memory(copied.numpy(), values)
    assert (copied.backend, copied.tolist()) == ("fakegpu", [1.0, 2.0])
    assert tp.tensor(producer, dtype="float32").dtype == "float32"


class _GradTracked:
    """A torch-like tensor that requires grad: DLPack export is refused until it is detached."""

    requires_grad = True

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def detach(self) -> np.ndarray:
        return self.values

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")


def test_producers_that_require_grad_are_detached() -> None:
    values = np.array([1.0, 2.0])
    assert tp.tensor(_GradTracked(values)).tolist() == [1.0, 2.0]
    assert np.shares_memory(tp.from_dlpack(_GradTracked(values)).numpy(), values)


def test_unsupported_dtypes_from_dlpack_are_refused_by_name() -> None:
    with pytest.raises(tp.DTypeError, match="float16"):
        tp.from_dlpack(np.zeros(2, np.float16))
    assert tp.tensor(np.zeros(2, np.float16)).dtype == "float32"  # tensor() converts, as for numpy arrays
