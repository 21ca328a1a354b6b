"""A backend that cannot store a dtype (``Backend.unsupported_dtypes``) gets no tensor of it: the creation ops
refuse an explicit request for it, as ``tp.tensor`` and ``tp.cast`` do, and the core's gradients index with a
dtype every backend stores. Run on the test backends of tests/float32_backend.py: without int64 ("int32only"),
and without float64 ("float32only"), whose kernels would store either as the narrower dtype without saying so."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import float32_backend
import numpy as np
import pytest

import tensorplug as tp
from tensorplug._runtime._observe import KernelCall, observing


@pytest.fixture
def no_int64() -> Iterator[str]:
    float32_backend.register(float32_backend.INT32_NAME, backend=float32_backend.Int32Backend)
    tp.set_backend(float32_backend.INT32_NAME)
    yield float32_backend.INT32_NAME
    tp.set_backend("numpy")
    float32_backend.unregister(float32_backend.INT32_NAME)


@pytest.fixture
def no_float64() -> Iterator[str]:
    float32_backend.register()
    tp.set_backend(float32_backend.NAME)
    yield float32_backend.NAME
    tp.set_backend("numpy")
    float32_backend.unregister()


def _creations(dtype: str) -> list[tuple[str, Callable[[], Any]]]:
    return [
        ("range", lambda: tp.range(0, 3, dtype=dtype)),
        ("arange", lambda: tp.arange(3, dtype=dtype)),
        ("fill", lambda: tp.fill((2,), 1, dtype)),
        ("full", lambda: tp.full((2,), 1, dtype)),
        ("zeros", lambda: tp.zeros((2,), dtype)),
        ("ones", lambda: tp.ones((2,), dtype)),
        ("one_hot", lambda: tp.one_hot([0, 1], 2, dtype=dtype)),
        ("random_uniform", lambda: tp.random_uniform((2,), 0, 5, dtype=dtype, seed=1)),
    ]


@pytest.mark.parametrize("op", [name for name, _ in _creations("int64")])
def test_creation_ops_refuse_int64_on_a_backend_without_it(no_int64: str, op: str) -> None:
    make = dict(_creations("int64"))[op]
    with pytest.raises(tp.DTypeError, match=r"dtype='int64'.*backend 'int32only' cannot store int64.*int32"):
        make()
    assert dict(_creations("int32"))[op]().dtype == "int32"  # what to do instead works


@pytest.mark.parametrize("op", [name for name, _ in _creations("float64") if name != "random_uniform"])
def test_creation_ops_refuse_float64_on_a_backend_without_it(no_float64: str, op: str) -> None:
    make = dict(_creations("float64"))[op]
    with pytest.raises(tp.DTypeError, match=r"dtype='float64'.*backend 'float32only' cannot store float64.*float32"):
        make()


def test_random_ops_refuse_float64_on_a_backend_without_it(no_float64: str) -> None:
    with pytest.raises(tp.DTypeError, match=r"random_uniform.*cannot store float64"):
        tp.random_uniform((2,), dtype="float64", seed=1)
    with pytest.raises(tp.DTypeError, match=r"random_normal.*cannot store float64"):
        tp.random_normal((2,), dtype="float64", seed=1)


class _Requested:
    """A kernel observer collecting the dtype attr of every kernel call that has one (Range, Fill, Cast...)."""

    synchronize = False

    def __init__(self) -> None:
        self.dtypes: list[tuple[str, str]] = []

    def kernel_ran(self, call: KernelCall) -> None:
        if "dtype" in call.attrs:
            self.dtypes.append((call.kernel, call.attrs["dtype"]))


def test_the_top_k_gradient_indexes_in_int32_on_a_backend_without_int64(no_int64: str) -> None:
    x = tp.tensor([[1.0, 4.0, 2.0, 3.0], [0.5, -1.0, 7.0, 6.0]])
    requested = _Requested()
    with observing(requested):
        dx = tp.grad(lambda x: tp.sum(tp.top_k(x, k=2)[0] * tp.tensor([10.0, 1.0])))(x)
    assert dx.tolist() == [[0.0, 10.0, 0.0, 1.0], [0.0, 0.0, 10.0, 1.0]]
    assert ("Range", "int32") in requested.dtypes
    assert [kernel for kernel, dtype in requested.dtypes if dtype == "int64"] == []


def test_creation_without_a_dtype_is_unchanged(no_int64: str) -> None:
    assert tp.range(3).dtype == "float32"
    assert tp.fill((2,), 7).tolist() == [7, 7]
    assert np.array_equal(tp.zeros((2,)).numpy(), np.zeros(2, np.float32))


def test_linspace_computes_in_float32_on_a_backend_without_float64(no_float64: str) -> None:
    assert tp.linspace(0.0, 1.0, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert tp.linspace(1, -1, 3).tolist() == [1.0, 0.0, -1.0]
