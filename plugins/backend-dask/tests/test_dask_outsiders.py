"""What outside users did with the dask backend: absurd sizes, their own dask arrays, debug mode's error attributes.

(Losing a worker that held scattered data is in test_dask_lost_worker.py, on a LocalCluster.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import dask.array as da
import numpy as np
import pytest
from lazy_guard import no_compute
from tensorplug_dask._backend import MAX_CHUNKS, DaskBackend

import tensorplug as tp

CHUNKS = 2  # conftest.py's


@pytest.fixture
def dask_options(request: pytest.FixtureRequest) -> Iterator[None]:
    """The dask backend with the options of ``@pytest.mark.parametrize("dask_options", [{...}], indirect=True)``."""
    tp.set_backend("dask", **request.param)
    try:
        yield
    finally:
        tp.set_backend("dask", chunks=CHUNKS)


# -- sizes no machine can hold: refused at once -----------------------------------------------------------------------


def test_a_random_tensor_of_ten_million_squared_is_refused_at_once() -> None:
    """The reported call, with the backend's default options, in a subprocess: it used to build a graph for minutes."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TENSORPLUG_")}
    code = """
        import tensorplug as tp
        tp.set_backend("dask")
        try:
            tp.random_normal((10**7, 10**7))
        except tp.ShapeError as exc:
            print(exc)
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], env=environment, capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("tp.random_normal((10**7, 10**7)) on dask was still building its graph after 60 s")
    assert done.returncode == 0, done.stderr[-2000:]
    message = done.stdout
    for part in (
        "RandomNormal on backend 'dask'",
        "float32 tensor of shape (10000000, 10000000)",
        "400,000,000,000,000 bytes (364 TiB)",
        "chunks of at most 128MiB",
        f"max_chunks ({MAX_CHUNKS:,})",
        "chunks='1GiB'",
    ):
        assert part in message, (part, message)


@pytest.mark.parametrize("dask_options", [{"chunks": CHUNKS, "max_chunks": 10}], indirect=True)
@pytest.mark.usefixtures("dask_options")
@pytest.mark.parametrize(
    ("kernel", "make"),
    [
        ("RandomNormal", lambda: tp.random_normal((5, 9))),
        ("RandomUniform", lambda: tp.random_uniform((30,), dtype="int32")),
        ("Fill", lambda: tp.zeros((4, 12), dtype="float64")),
        ("Range", lambda: tp.range(0, 30)),
        ("BroadcastTo", lambda: tp.broadcast_to(tp.tensor(1.0), (3, 30))),
        ("storing host data", lambda: tp.tensor(np.zeros(40, np.float32))),
    ],
)
def test_arrays_of_more_chunks_than_max_chunks_are_refused_before_any_graph(kernel: str, make: Any) -> None:
    with no_compute(), pytest.raises(tp.ShapeError) as caught:
        make()
    message = str(caught.value)
    assert message.startswith(f"{kernel} on backend 'dask': ")
    assert "past this backend's max_chunks (10)" in message
    assert "the chunks option 2" in message
    tp.ones((4, 5))  # ten chunks of two by two: at the limit, made


def test_the_chunk_count_is_bounded_before_dask_lists_the_chunks() -> None:
    """10**15 elements in chunks of 2 along one axis: normalizing them would hold a tuple of 5 * 10**14 ints."""
    backend = DaskBackend(chunks=CHUNKS)
    with pytest.raises(tp.ShapeError, match=r"at least 500,000,000,000,000 chunks"):
        backend.new_chunks("Fill", (10**15,), np.float32)
    with pytest.raises(tp.ShapeError, match=r"at least 5,960,465 chunks"):
        DaskBackend().new_chunks("Range", (10**14,), np.int64)  # "auto": 128 MiB chunks at most


def test_max_chunks_must_be_a_positive_int() -> None:
    for bad in (0, -1, 2.5, True, "10"):
        with pytest.raises(tp.BackendError, match="max_chunks must be a positive int"):
            DaskBackend(max_chunks=bad)  # type: ignore[arg-type]


def test_the_numpy_backend_refuses_the_same_call_at_once_too() -> None:
    tp.set_backend("numpy")
    try:
        with pytest.raises(tp.KernelError) as caught:
            tp.random_normal((10**7, 10**7))
    finally:
        tp.set_backend("dask")
    message = str(caught.value)
    assert "kernel 'RandomNormal' on backend 'numpy'" in message
    assert "(10000000, 10000000)" in message
    assert "'float32'" in message
    assert "MemoryError" in message


# -- random kernels: one generator per chunk, made inside its task ---------------------------------------------------


def test_random_graphs_are_built_without_a_task_per_chunk() -> None:
    """dask's own generator makes one per chunk while building the graph (minutes for a million chunks). Unseeded:
    a seeded draw is made on the host, the same values as every backend's, and stored as host data is."""
    x = tp.random_normal((2000, 2000))  # a million chunks of 2 x 2
    graph = x._data.__dask_graph__()
    assert x._data.npartitions == 1_000_000
    assert not any(layer.is_materialized() for layer in graph.layers.values())


def test_random_chunks_draw_from_their_own_streams_and_a_seed_repeats_them() -> None:
    a = tp.random_normal((8,), seed=3).numpy()
    assert len({tuple(a[i : i + CHUNKS]) for i in range(0, 8, CHUNKS)}) == 4  # four chunks, four streams
    np.testing.assert_array_equal(a, tp.random_normal((8,), seed=3).numpy())
    assert not np.array_equal(a, tp.random_normal((8,), seed=4).numpy())
    fresh = tp.random_uniform((8,))
    np.testing.assert_array_equal(fresh.numpy(), fresh.numpy())  # values fixed once made, though unseeded
    ints = tp.random_uniform((1000,), 3, 7, dtype="int64", seed=0).numpy()
    assert ints.dtype == np.int64
    assert set(np.unique(ints)) == {3, 4, 5, 6}
    assert tp.random_normal((), seed=1).shape == ()


# -- the user's own dask arrays ----------------------------------------------------------------------------------------


def test_tp_tensor_of_a_dask_array_wraps_it_with_zero_compute() -> None:
    x = da.arange(24, chunks=5, dtype=np.float64).reshape(4, 6)  # the user's chunks, not the backend's
    with no_compute():
        t = tp.tensor(x)
        assert t._data is x  # taken as it is: its graph, its chunks
        assert (t.backend, t.dtype, t.shape) == ("dask", "float64", (4, 6))
        as_float32 = tp.tensor(x, dtype="float32")
        total = tp.sum(t * 2.0, axis=0)
    assert as_float32.dtype == "float32"
    np.testing.assert_array_equal(total.numpy(), (np.arange(24.0).reshape(4, 6) * 2.0).sum(axis=0))


@pytest.mark.parametrize(
    ("given", "becomes"),
    [("float16", "float32"), ("uint8", "int32"), ("int16", "int32"), ("uint32", "int64"), (">f8", "float64")],
)
def test_dask_arrays_take_the_dtypes_numpy_arrays_take(given: str, becomes: str) -> None:
    values = np.arange(6).astype(given)
    with no_compute():
        t = tp.tensor(da.from_array(values, chunks=4))
    assert t.dtype == becomes
    assert t.dtype == tp.tensor(values).dtype
    np.testing.assert_array_equal(t.numpy(), values)


def test_dask_arrays_tensorplug_cannot_hold_are_refused_clearly() -> None:
    with pytest.raises(tp.DTypeError, match=r"dask array of dtype complex64 has no tensorplug dtype"):
        tp.tensor(da.ones(3, dtype=np.complex64))
    x = da.arange(6, chunks=2)
    with pytest.raises(tp.BackendError, match=r"unknown shape \(nan,\).*compute_chunk_sizes"):
        tp.tensor(x[x > 2])


def test_from_dlpack_of_a_dask_array_says_to_use_tp_tensor() -> None:
    with pytest.raises(tp.DTypeError) as caught:
        tp.from_dlpack(da.ones(3, chunks=2))
    message = str(caught.value)
    assert message.startswith("from_dlpack(): expects a DLPack producer")
    assert "dask.array.core.Array is lazy: it holds no memory to share. Use tp.tensor(x)" in message


def test_tp_tensor_of_a_dask_array_on_an_eager_backend_computes_it_keeping_its_dtype() -> None:
    x = da.arange(6, chunks=2, dtype=np.float64) / 4
    tp.set_backend("numpy")
    try:
        t = tp.tensor(x)
    finally:
        tp.set_backend("dask")
    assert (t.backend, t.dtype) == ("numpy", "float64")  # as numpy arrays keep theirs (lists give float32)
    assert t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]


# -- debug mode: the deferred NonFiniteError carries what eager backends' errors carry ---------------------------------


def test_debug_mode_errors_name_their_kernel_and_backend_on_dask() -> None:
    with tp.debug():
        y = tp.log(tp.tensor(np.array([1.0, -1.0, 0.0, 2.0], np.float32)))
    with pytest.raises(tp.NonFiniteError) as caught:
        y.numpy()
    error = caught.value
    assert (error.kernel, error.backend, error.gradient_of) == ("Log", "dask", None)
    assert (error.nan, error.inf) in {(1, 0), (0, 1)}  # the counts of the chunk that raised first


def test_debug_mode_errors_in_backprop_name_the_gradient_on_dask() -> None:
    with tp.debug():
        g = tp.grad(lambda t: tp.sum(tp.sqrt(t)))(tp.tensor(np.array([0.0, 1.0], np.float32)))
    with pytest.raises(tp.NonFiniteError) as caught:
        g.numpy()
    assert caught.value.backend == "dask"
    assert caught.value.gradient_of == "Sqrt"
    assert caught.value.kernel
    assert caught.value.inf == 1


def test_debug_mode_errors_for_a_gradient_no_kernel_made_name_it_on_dask() -> None:
    @tp.custom_grad
    def poisoned(x: tp.Tensor) -> Any:
        return x * 1.0, lambda dy: tp.tensor(np.array([np.nan, 0.0], np.float32))

    with tp.debug():
        g = tp.grad(lambda t: tp.sum(poisoned(t)))(tp.tensor(np.array([1.0, 2.0], np.float32)))
    with pytest.raises(tp.NonFiniteError) as caught:
        g.numpy()
    assert caught.value.backend == "dask"
    assert caught.value.kernel == caught.value.gradient_of != ""
    assert caught.value.nan == 1
