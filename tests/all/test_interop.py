"""numpy and torch side by side: switching backends mid-program, zero-copy DLPack, the same code on both."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import numpy as np
import pytest
import torch

import tensorplug as tp


def test_numpy_stays_the_default_on_the_cpu() -> None:
    # torch ranks below numpy without CUDA (see tensorplug_torch._probe); with a GPU it ranks above.
    if not torch.cuda.is_available():
        assert tp.list_backends().index("numpy") < tp.list_backends().index("torch")


def test_switching_backends_mid_program_moves_tensors_created_before() -> None:
    a = tp.tensor([1.0, 2.0, 3.0])
    w = tp.variable([0.5, 0.5, 0.5], name="interop_w")
    assert (a.backend, w.backend) == ("numpy", "numpy")
    tp.set_backend("torch")
    y = a * w + 1.0
    assert y.backend == "torch"
    assert isinstance(y.raw, torch.Tensor)
    assert y.tolist() == [1.5, 2.0, 2.5]
    g = tp.grad(lambda x: tp.sum(x * x))(a)
    assert g.backend == "torch"
    assert g.tolist() == [2.0, 4.0, 6.0]
    tp.set_backend("numpy")
    z = y + a
    assert z.backend == "numpy"
    assert z.tolist() == [2.5, 4.0, 5.5]


def test_moving_between_cpu_backends_is_zero_copy() -> None:
    t = tp.tensor(np.arange(6, dtype=np.float32))
    on_torch = t.to_backend("torch")
    assert on_torch.backend == "torch"
    assert np.shares_memory(on_torch.numpy(), t.numpy())
    back = on_torch.to_backend("numpy")
    assert np.shares_memory(back.numpy(), t.numpy())


def test_dlpack_both_ways() -> None:
    source = torch.arange(4, dtype=torch.float64)
    t = tp.from_dlpack(source)  # on the active (numpy) backend, sharing torch's memory
    assert t.dtype == "float64"
    assert t.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert np.shares_memory(t.numpy(), source.numpy())
    exported = torch.from_dlpack(t)
    assert exported.data_ptr() == source.data_ptr()
    tp.set_backend("torch")
    u = tp.from_dlpack(np.ones(3, dtype=np.int32))
    assert (u.backend, u.dtype, u.tolist()) == ("torch", "int32", [1, 1, 1])


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_the_same_training_code_runs_on_both(backend: str) -> None:
    tp.set_backend(backend)
    rng = np.random.default_rng(3)
    x = tp.tensor(rng.standard_normal((32, 3)).astype(np.float32))
    target = tp.tensor((rng.standard_normal((32, 1)) > 0).astype(np.float32))
    w = tp.variable(np.zeros((3, 1), np.float32), name=f"same_code_w_{backend}")

    def loss() -> tp.Tensor:
        return tp.losses.sigmoid_cross_entropy(target, x @ w)

    first = None
    for _ in range(40):
        value, grads = tp.variable_grads(loss, [w])
        first = value.item() if first is None else first
        w.assign(w - grads[w.name] * 0.5)
    assert value.item() < first
    assert w.backend == backend


def test_torch_is_imported_only_when_its_backend_starts() -> None:
    import subprocess

    code = (
        "import sys, tensorplug as tp; tp.ones(2); before = 'torch' in sys.modules; "
        "tp.set_backend('torch'); print(before, 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True"]


# -- numpy, torch and tensorplug tensors, converted every way -------------------------------------

DTYPES = ["float32", "float64", "int32", "int64", "bool"]


def _values(dtype: str) -> np.ndarray:
    return (np.arange(6).reshape(2, 3) % 3).astype(dtype)


def _address(t: tp.Tensor) -> int:
    """Where the tensor's storage starts in (host) memory."""
    raw = t.raw
    return int(raw.data_ptr()) if isinstance(raw, torch.Tensor) else int(np.asarray(raw).ctypes.data)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_from_dlpack_of_a_torch_tensor_shares_its_memory(backend: str, dtype: str) -> None:
    tp.set_backend(backend)
    source = torch.from_numpy(_values(dtype))
    t = tp.from_dlpack(source)
    assert (t.backend, t.dtype, t.shape) == (backend, dtype, (2, 3))
    assert _address(t) == source.data_ptr()
    np.testing.assert_array_equal(t.numpy(), _values(dtype))


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_torch_from_dlpack_of_a_tensor_shares_its_memory(backend: str, dtype: str) -> None:
    tp.set_backend(backend)
    t = tp.tensor(_values(dtype))
    exported = torch.from_dlpack(t)
    assert exported.dtype == getattr(torch, dtype)
    assert exported.data_ptr() == _address(t)
    np.testing.assert_array_equal(exported.numpy(), _values(dtype))
    back = tp.from_dlpack(exported)  # and round again
    assert back.dtype == dtype
    assert _address(back) == _address(t)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_of_a_torch_tensor_is_a_copy_with_its_dtype(backend: str, dtype: str) -> None:
    tp.set_backend(backend)
    source = torch.from_numpy(_values(dtype))
    t = tp.tensor(source)
    assert (t.backend, t.dtype) == (backend, dtype)
    assert _address(t) != source.data_ptr()
    source.zero_()  # the copy does not see later writes
    np.testing.assert_array_equal(t.numpy(), _values(dtype))


def test_torch_takes_read_only_numpy_storage_through_dlpack() -> None:
    # numpy exports read-only arrays only to DLPack >= 1.0 consumers; torch 2.13 asks for max_version=(1, 0)
    t = tp.broadcast_to(tp.tensor([1.0, 2.0]), (3, 2))  # the numpy kernel returns a read-only view
    assert not np.asarray(t.raw).flags.writeable
    exported = torch.from_dlpack(t)
    assert exported.tolist() == [[1.0, 2.0]] * 3
    assert exported.data_ptr() == _address(t)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_from_dlpack_of_a_tensor_is_read_only_on_both_backends(backend: str, dtype: str) -> None:
    if backend == "torch" and torch.cuda.is_available():
        pytest.skip("numpy reads host memory; the torch backend is on the GPU here")
    tp.set_backend(backend)
    t = tp.tensor(_values(dtype))
    view = np.from_dlpack(t)
    assert view.ctypes.data == _address(t)
    assert not view.flags.writeable
    assert torch.from_dlpack(t).data_ptr() == _address(t)  # torch has no read-only tensors: docs/tour.md's escape hatch


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i8", ">i4"])
def test_the_torch_backend_takes_big_endian_arrays(on_torch: None, dtype: str) -> None:
    array = np.array([1.5, -2.0], dtype=dtype) if "f" in dtype else np.array([7, -3], dtype=dtype)
    t = tp.tensor(array)
    assert (t.backend, t.dtype) == ("torch", np.dtype(dtype).newbyteorder("=").name)
    assert (t * 2).tolist() == (array * 2).tolist()


def test_tensor_and_from_dlpack_take_tensors_that_require_grad() -> None:
    weight = torch.tensor([1.0, 2.0], requires_grad=True)
    assert tp.tensor(weight).tolist() == [1.0, 2.0]
    assert _address(tp.from_dlpack(weight)) == weight.data_ptr()
    tp.set_backend("torch")
    assert tp.tensor(weight).tolist() == [1.0, 2.0]
    shared = tp.from_dlpack(weight)
    assert shared.raw.data_ptr() == weight.data_ptr()
    assert not shared.raw.requires_grad


def test_torch_dtypes_tensorplug_lacks() -> None:
    half = torch.tensor([1.5, 2.5], dtype=torch.float16)
    for backend in ("numpy", "torch"):
        tp.set_backend(backend)
        assert tp.tensor(half).dtype == "float32"  # converted, as numpy arrays of float16 are
        with pytest.raises(tp.DTypeError, match="float16"):
            tp.from_dlpack(half)
    with pytest.raises(tp.DTypeError, match="bfloat16"):
        tp.tensor(torch.zeros(2, dtype=torch.bfloat16))


def test_tensor_of_a_tensor_on_the_other_backend_moves_it_without_a_copy() -> None:
    on_numpy = tp.tensor(np.arange(4.0))
    tp.set_backend("torch")
    moved = tp.tensor(on_numpy)
    assert moved.backend == "torch"
    assert on_numpy.backend == "numpy"
    assert _address(moved) == _address(on_numpy)
    tp.set_backend("numpy")
    back = tp.tensor(moved)
    assert back.backend == "numpy"
    assert _address(back) == _address(on_numpy)


def test_numpy_reads_torch_backend_tensors_in_place() -> None:
    tp.set_backend("torch")
    t = tp.tensor([1.0, 2.0, 3.0])
    view = np.asarray(t, copy=False)
    assert view.ctypes.data == t.raw.data_ptr()
    assert not view.flags.writeable
    assert np.array(t).flags.writeable


def test_repr_names_the_backend_when_it_is_not_the_active_one() -> None:
    tp.set_backend("torch")
    t = tp.tensor([[1, 2], [3, 4]])
    assert repr(t) == "tensor([[1, 2],\n        [3, 4]], dtype=int32)"
    tp.set_backend("numpy")
    assert repr(t) == "tensor([[1, 2],\n        [3, 4]], dtype=int32, backend='torch')"
    assert str(t) == "[[1 2]\n [3 4]]"


# -- indexing on the torch backend ---------------------------------------------------------------------

A = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
_ = slice(None)


@pytest.mark.parametrize(
    "key",
    [
        1,
        -1,
        slice(None, None, -1),
        (_, slice(3, 0, -2)),
        (Ellipsis, None, slice(-1, None, -2)),
        (0, _, [3, 0, -1]),
        (_, [[2], [0]]),
        (None, 1, Ellipsis, 0),
    ],
    ids=repr,
)
def test_indexing_on_torch_matches_numpy(key: object) -> None:
    tp.set_backend("torch")
    x = tp.tensor(A)
    y = x[key]
    assert isinstance(y.raw, torch.Tensor)
    np.testing.assert_array_equal(y.numpy(), A[key])
    y = x[tp.tensor([1, -2])]  # an index tensor stays on the device
    np.testing.assert_array_equal(y.numpy(), A[[1, -2]])


def test_indexing_on_torch_is_differentiable() -> None:
    tp.set_backend("torch")
    x = tp.tensor(np.linspace(-1.0, 1.0, 24).reshape(2, 3, 4))
    tp.testing.check_grads(lambda t: t[:, ::-2, None, [3, 0, 3]], [x], order=2)
    tp.testing.check_grads(lambda t: t[1, ..., 1:3], [x], order=2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible to torch")
def test_cuda_tensors_go_to_the_host_for_numpy_and_stay_on_the_device_for_torch() -> None:
    source = torch.arange(4, dtype=torch.float32, device="cuda")
    assert tp.tensor(source).tolist() == [0.0, 1.0, 2.0, 3.0]  # numpy backend: copied to the host
    assert tp.from_dlpack(source).tolist() == [0.0, 1.0, 2.0, 3.0]
    tp.set_backend("torch", device="cuda")
    shared = tp.from_dlpack(source)
    assert shared.raw.data_ptr() == source.data_ptr()
    copied = tp.tensor(source)
    assert copied.raw.is_cuda
    assert copied.raw.data_ptr() != source.data_ptr()
    assert "device='cuda:0'" in repr(copied)
    with pytest.raises(tp.CopyError):
        np.asarray(copied, copy=False)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_each_shipped_backend_declares_every_catalogue_kernel_and_each_resolves(backend: str) -> None:
    """The one check that every kernel of a shipped backend resolves: its plugin declares each catalogue name, each
    lazy reference imports a callable, and what is registered for the backend is exactly what it declares."""

    specs = importlib.import_module(f"tensorplug_{backend}.plugin").tensorplug_kernels()
    assert sorted(s.kernel_name for s in specs) == sorted(tp.kernel_names.CATALOGUE)
    unresolved = []
    for spec in specs:
        try:
            fn = pkgutil.resolve_name(spec.kernel) if isinstance(spec.kernel, str) else spec.kernel  # "module:attr"
        except (ImportError, AttributeError, ValueError) as exc:
            unresolved.append(f"{spec.kernel_name}: {exc}")
            continue
        if not callable(fn):
            unresolved.append(f"{spec.kernel_name}: {fn!r} is not callable")
    assert unresolved == []
    registered = tp.kernels_for_backend(backend)
    assert {s.kernel_name: s.kernel for s in registered} == {s.kernel_name: s.kernel for s in specs}
    assert all(s.source == f"tensorplug-{backend}" for s in registered)
