"""Data coming in, as outside users and backend authors hit it: integers past int64, a backend whose
storage changes a dtype, a backend that declares the dtypes it lacks, objects whose ``__array__`` fails, and
big-endian arrays."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import tensorplug as tp

# -- integers outside int64 (item 2) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (2**63, 2**63),
        (2**64 - 1, 2**64 - 1),
        (2**64, 2**64),
        (-(2**63) - 1, -(2**63) - 1),
        ([1, 2**63], 2**63),
        ([-5, 2**63], 2**63),
        ([[1], [2**63]], 2**63),
        ([np.uint64(2**63)], 2**63),
        (np.uint64(2**64 - 1), 2**64 - 1),
        (np.array([1, 2**63], dtype=np.uint64), 2**63),
    ],
    ids=repr,
)
def test_integers_int64_cannot_hold_are_refused_by_value(data: Any, named: int) -> None:
    with pytest.raises(tp.DTypeError, match=rf"{named}.*dtype='float64'"):
        tp.tensor(data)


def test_integers_int64_holds_are_kept_exact() -> None:
    assert (tp.tensor(2**63 - 1).dtype, tp.tensor(2**63 - 1).item()) == ("int64", 2**63 - 1)
    assert tp.tensor(-(2**63)).item() == -(2**63)
    assert tp.tensor([1, 2**62]).tolist() == [1, 2**62]
    fits = tp.tensor(np.array([5, 2**63 - 1], dtype=np.uint64))  # uint64 that int64 holds converts exactly
    assert (fits.dtype, fits.tolist()) == ("int64", [5, 2**63 - 1])
    assert tp.tensor(np.uint64(7)).tolist() == 7


def test_an_explicit_float_dtype_takes_big_integers() -> None:
    assert tp.tensor(2**63, dtype="float64").item() == 2.0**63
    assert tp.tensor([1, 2**64], dtype="float64").tolist() == [1.0, 2.0**64]
    assert tp.tensor(np.array([2**64 - 1], dtype=np.uint64), dtype="float64").tolist() == [2.0**64]
    assert tp.tensor(2**64, dtype="float32").item() == 2.0**64


def test_float_data_takes_big_integers_as_floats() -> None:
    # Data holding a float is float data (float32), its integers converted: the same past int64 as below.
    assert tp.tensor([1.5, 2**63]).tolist() == [1.5, 2.0**63]
    assert tp.tensor([2**64, 1.5]).tolist() == [2.0**64, 1.5]
    assert tp.tensor([1e20, 2.0]).dtype == "float32"


@pytest.mark.parametrize(
    ("data", "dtype", "named"),
    [
        (2**63, "int64", 2**63),
        ([1, 2**40], "int32", 2**40),
        (np.array([2**63], dtype=np.uint64), "int64", 2**63),
        (np.array([1, 2**40]), "int32", 2**40),
        (np.array([-(2**40)]), "int32", -(2**40)),
    ],
    ids=repr,
)
def test_an_explicit_integer_dtype_refuses_what_it_cannot_hold(data: Any, dtype: str, named: int) -> None:
    with pytest.raises(tp.DTypeError, match=rf"{named}.*{dtype}"):
        tp.tensor(data, dtype=dtype)


def test_an_explicit_integer_dtype_converts_what_it_holds() -> None:
    assert tp.tensor(np.array([7, 2**31 - 1], dtype=np.uint64), dtype="int32").tolist() == [7, 2**31 - 1]
    assert tp.tensor(np.array([-3], dtype=np.int64), dtype="int32").tolist() == [-3]


# -- a backend's storage must hold the dtype the tensor reports (item 3) -----------------------------------------


_NARROWED = {np.dtype("float64"): np.dtype("float32"), np.dtype("int64"): np.dtype("int32")}


class LossyBackend(tp.Backend):
    """Stores float64 as float32 and int64 as int32, as JAX does with x64 off, and does not say so."""

    def from_host(self, array: np.ndarray) -> Any:
        return array.astype(_NARROWED.get(array.dtype, array.dtype))

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw)

    def dtype_of(self, raw: Any) -> str:
        return str(raw.dtype.name)


class NoFloat64Backend(LossyBackend):
    """The same storage, declaring what it lacks; counts what reached ``from_host``."""

    unsupported_dtypes = frozenset({"float64"})

    def __init__(self) -> None:
        self.stored: list[str] = []

    def from_host(self, array: np.ndarray) -> Any:
        self.stored.append(array.dtype.name)
        return super().from_host(array)


@pytest.fixture
def lossy() -> Iterator[None]:
    tp.register_backend("lossy", LossyBackend)  # the unit conftest removes it after the test
    tp.set_backend("lossy")
    yield
    tp.set_backend("numpy")


@pytest.fixture
def no_float64() -> Iterator[NoFloat64Backend]:
    tp.register_backend("nof64", NoFloat64Backend)
    tp.set_backend("nof64")
    yield tp.backend("nof64")  # type: ignore[misc]
    tp.set_backend("numpy")


@pytest.mark.usefixtures("lossy")
def test_storage_of_another_dtype_is_refused_naming_the_backend() -> None:
    with pytest.raises(tp.DTypeError, match=r"tensor\(\): backend 'lossy' stored float64\[2\] as float32"):
        tp.tensor([1.0, 2.0], dtype="float64")
    with pytest.raises(tp.DTypeError, match=r"backend 'lossy' stored float64\[2\] as float32") as info:
        tp.tensor(np.array([1.0, 2.0]))
    assert "unsupported_dtypes" in str(info.value)
    assert "tp.set_backend" in str(info.value)
    with pytest.raises(tp.DTypeError, match=r"backend 'lossy' stored int64\[1\] as int32"):
        tp.tensor([2**40])  # an int64 that int32 storage would wrap to 0
    t = tp.tensor([1.0, 2.0])  # what the backend holds goes through
    assert (t.dtype, t.raw.dtype, t.tolist()) == ("float32", np.float32, [1.0, 2.0])


@pytest.mark.usefixtures("tensorplug_registries")
def test_moving_to_a_backend_whose_storage_changes_the_dtype_is_refused() -> None:
    t = tp.tensor([0.5, 1.5], dtype="float64")  # on numpy
    tp.register_backend("lossy", LossyBackend)
    with pytest.raises(tp.DTypeError, match=r"to_backend\('lossy'\): backend 'lossy' stored float64\[2\] as float32"):
        t.to_backend("lossy")
    tp.set_backend("lossy")
    with pytest.raises(tp.DTypeError, match=r"tensor\(\): backend 'lossy' stored float64\[2\]"):
        tp.tensor(t)
    tp.register_kernel("Neg", "lossy", lambda inputs, attrs, backend: -inputs["x"])
    with pytest.raises(tp.DTypeError, match=r"moving a tensor to the active backend: backend 'lossy' stored"):
        tp.neg(t)  # run_kernel moves t to the active backend first
    assert (t.backend, t.dtype, t.tolist()) == ("numpy", "float64", [0.5, 1.5])  # t is left as it was


def test_a_declared_unsupported_dtype_is_refused_up_front(no_float64: NoFloat64Backend) -> None:
    refused = r"backend 'nof64' cannot store float64.*dtype='float32'"
    with pytest.raises(tp.DTypeError, match=refused):
        tp.tensor([1.0], dtype="float64")
    with pytest.raises(tp.DTypeError, match=refused):
        tp.tensor(np.zeros(3))
    with pytest.raises(tp.DTypeError, match=refused):
        tp.from_dlpack(np.zeros(3))
    start = tp.tensor([1.0])
    with pytest.raises(tp.DTypeError, match=refused):
        tp.cast(start, "float64")
    assert no_float64.stored == ["float32"]  # only the float32 tensor that cast started from reached storage
    tp.set_backend("numpy")
    on_numpy = tp.tensor([1.0], dtype="float64")
    with pytest.raises(tp.DTypeError, match=r"to_backend\('nof64'\): backend 'nof64' cannot store float64"):
        on_numpy.to_backend("nof64")


# -- host data that does not convert, and byte order (items 12a, 12b) --------------------------------------------


class RaisingArray:
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise RuntimeError("the device is gone")


def test_an_object_whose_array_conversion_fails_gives_a_tensorplug_error() -> None:
    with pytest.raises(
        tp.DTypeError, match=r"cannot convert a .*RaisingArray .*RuntimeError: the device is gone"
    ) as info:
        tp.tensor(RaisingArray())
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(tp.DTypeError, match="RaisingArray"):
        tp.tensor(RaisingArray(), dtype="float32")
    with pytest.raises(tp.DTypeError, match="RaisingArray"):
        tp.add(tp.tensor([1.0]), RaisingArray())


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i4", ">i8", "<f8"])
def test_arrays_of_either_byte_order_are_stored_native(dtype: str) -> None:
    array = np.array([1.5, -2.0], dtype=dtype) if "f" in dtype else np.array([7, -3], dtype=dtype)
    t = tp.tensor(array)
    assert t.dtype == np.dtype(dtype).newbyteorder("=").name
    assert t.raw.dtype.isnative
    assert t.tolist() == array.tolist()
    assert (t + t).tolist() == (array + array).tolist()


class RefusingBackend(LossyBackend):
    def from_host(self, array: np.ndarray) -> Any:
        raise ValueError("given numpy array has byte order different from the native byte order")


def test_a_backend_failing_to_store_host_data_is_named() -> None:
    tp.register_backend("refusing", RefusingBackend)
    tp.set_backend("refusing")
    with pytest.raises(
        tp.BackendError, match=r"backend 'refusing' \(device 'cpu'\) failed to store float32\[2\]"
    ) as info:
        tp.tensor([1.0, 2.0])
    assert isinstance(info.value.__cause__, ValueError)
