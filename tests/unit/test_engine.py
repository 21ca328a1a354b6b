"""The engine: backend selection and lifecycle, dispatch errors, data movement, kernel hooks."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._engine import engine


class ListBackend(tp.Backend):
    """A second backend whose storage is a numpy array inside a one-element list (so moves are visible)."""

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.disposed = False

    def from_host(self, array: np.ndarray) -> Any:
        return _Boxed(array)

    def to_host(self, raw: Any) -> np.ndarray:
        return np.asarray(raw.array)

    def dtype_of(self, raw: Any) -> str:
        return str(raw.array.dtype.name)

    def dispose(self) -> None:
        self.disposed = True


class _Boxed:
    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.shape = array.shape


def boxed_add(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return _Boxed(np.add(inputs["a"].array, inputs["b"].array))


def boxed_fill(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return _Boxed(np.full(attrs["shape"], attrs["value"], attrs["dtype"]))


@pytest.fixture
def boxed() -> Any:
    tp.register_backend("boxed", ListBackend, priority=-5)
    tp.register_kernel(K.ADD, "boxed", boxed_add)
    tp.register_kernel(K.FILL, "boxed", boxed_fill)
    yield
    tp.unregister_kernel(K.ADD, "boxed")
    tp.unregister_kernel(K.FILL, "boxed")


def test_numpy_is_registered_and_listed() -> None:
    assert "numpy" in tp.list_backends()
    assert tp.get_backend() == "numpy"
    assert tp.backend().name == "numpy"


def test_missing_kernel_names_kernel_backend_and_who_has_it(boxed: Any) -> None:
    tp.set_backend("boxed")
    x = tp.zeros(2)
    with pytest.raises(tp.KernelNotFoundError) as info:
        tp.exp(x)
    message = str(info.value)
    assert "'Exp'" in message
    assert "'boxed'" in message
    assert "numpy (from tensorplug-numpy)" in message
    assert isinstance(info.value, LookupError)
    with pytest.raises(tp.KernelNotFoundError, match="No backend has it"):
        tp.run_kernel("NoSuchKernel", {})


def test_an_unknown_kernel_name_suggests_the_close_ones() -> None:
    x = tp.tensor([1.0, -1.0])
    with pytest.raises(tp.KernelNotFoundError, match=r"No kernel 'Relus' .*'numpy'.*Did you mean 'Relu'"):
        tp.run_kernel("Relus", {"x": x})
    with pytest.raises(tp.KernelNotFoundError, match=r"Did you mean 'Relu'"):
        tp.run_kernel("relu", {"x": x})  # case aside
    with pytest.raises(tp.KernelNotFoundError) as info:
        tp.run_kernel("NoSuchKernel", {})
    assert "Did you mean" not in str(info.value)


def test_switching_backends_moves_tensors_created_before(boxed: Any) -> None:
    a = tp.tensor([1.0, 2.0])
    b = tp.tensor([10.0, 20.0])
    assert a.backend == "numpy"
    tp.set_backend("boxed")
    c = a + b
    assert c.backend == "boxed"
    assert a.backend == "boxed"  # moved in place, as TensorFlow.js does
    assert c.tolist() == [11.0, 22.0]
    tp.set_backend("numpy")
    d = c + a
    assert d.backend == "numpy"
    assert d.tolist() == [12.0, 24.0]


def test_set_backend_unknown_and_options(boxed: Any) -> None:
    with pytest.raises(tp.BackendError, match=r"'nope'.*registered: .*numpy"):
        tp.set_backend("nope")
    tp.set_backend("boxed", flavour="salty")
    assert isinstance(tp.backend(), ListBackend)
    assert tp.backend().options == {"flavour": "salty"}


def test_default_backend_skips_a_failing_factory_with_a_warning() -> None:
    def broken_factory() -> tp.Backend:
        raise RuntimeError("no device here")

    tp.register_backend("broken", broken_factory, priority=100)
    engine.active = None
    with pytest.warns(tp.PluginWarning, match="'broken'.*no device here.*trying the next"):
        assert tp.get_backend() == "numpy"
    with pytest.raises(tp.BackendError, match="no device here"):
        tp.set_backend("broken")


def test_no_backend_at_all_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "specs", {})
    monkeypatch.setattr(engine, "active", None)
    with pytest.raises(tp.NoBackendError, match=r"pip install \./plugins/backend-numpy"):
        tp.ones(2)


def test_kernel_setup_and_dispose_run_once_per_activation() -> None:
    calls: list[str] = []
    tp.register_backend("hooked", ListBackend)
    tp.register_kernel(
        K.FILL, "hooked", boxed_fill, setup=lambda b: calls.append(f"setup {b.name}"),
        dispose=lambda b: calls.append(f"dispose {b.name}"),
    )  # fmt: skip
    try:
        assert calls == []  # nothing runs before the backend is initialised
        tp.set_backend("hooked")
        tp.set_backend("numpy")
        tp.set_backend("hooked")
        assert calls == ["setup hooked"]
        backend = tp.backend("hooked")
        tp.remove_backend("hooked")
        assert calls == ["setup hooked", "dispose hooked"]
        assert backend.disposed
        tp.register_backend("hooked", ListBackend)
        tp.set_backend("hooked")
        assert calls == ["setup hooked", "dispose hooked", "setup hooked"]
    finally:
        tp.unregister_kernel(K.FILL, "hooked")
    assert calls[-1] == "dispose hooked"  # unregistering from an initialised backend disposes


@pytest.mark.usefixtures("tensorplug_registries")
def test_kernel_failures_name_kernel_backend_shapes_and_dtypes() -> None:
    @tp.register_kernel("Explode", "numpy")
    def explode(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        raise ValueError("kaboom")

    with pytest.raises(tp.KernelError) as info:
        tp.run_kernel("Explode", {"x": tp.ones((2, 3)), "ys": [tp.tensor([1])]}, {"k": 1})
    message = str(info.value)
    assert "'Explode' on backend 'numpy'" in message
    assert "x=float32[2, 3]" in message
    assert "ys=[int32[1]]" in message
    assert "{'k': 1}" in message
    assert "ValueError: kaboom" in message
    assert isinstance(info.value.__cause__, ValueError)


def test_run_kernel_rejects_non_tensor_inputs() -> None:
    with pytest.raises(tp.DTypeError, match=r"run_kernel\('Add'\) on backend 'numpy': input 'b' is a float"):
        tp.run_kernel("Add", {"a": tp.ones(1), "b": 1.0})


@pytest.mark.usefixtures("tensorplug_registries")
def test_lazy_kernel_reference_is_resolved_at_first_use() -> None:
    tp.register_kernel("LazyNeg", "numpy", "tensorplug_numpy._unary:neg")
    tp.register_kernel("LazyMissing", "numpy", "tensorplug_numpy._unary:does_not_exist")
    assert tp.run_kernel("LazyNeg", {"x": tp.tensor([2.0])}).tolist() == [-2.0]
    with pytest.raises(tp.KernelError, match=r"could not be imported from '.*_unary:does_not"):
        tp.run_kernel("LazyMissing", {"x": tp.tensor([2.0])})


@pytest.mark.usefixtures("tensorplug_registries")
def test_multi_output_kernels_return_lists_and_differentiate() -> None:
    @tp.register_kernel("TwiceThrice", "numpy")
    def twice_thrice(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        return (inputs["x"] * 2, inputs["x"] * 3)

    @tp.register_gradient("TwiceThrice")
    def twice_thrice_grad(dys: list[tp.Tensor], saved: tuple[Any, ...], attrs: dict[str, Any]) -> Any:
        return (dys[0] * 2.0 + dys[1] * 3.0,)

    a, b = tp.run_kernel("TwiceThrice", {"x": tp.tensor([1.0, 2.0])})
    assert (a.tolist(), b.tolist()) == ([2.0, 4.0], [3.0, 6.0])
    # Only the second output is used: the first gets a zero gradient filled in.
    g = tp.grad(lambda x: tp.sum(tp.run_kernel("TwiceThrice", {"x": x})[1] * x))(tp.tensor([1.0, 2.0]))
    assert g.tolist() == [6.0, 12.0]  # d/dx 3x*x = 6x


def test_every_core_kernel_is_registered_for_numpy() -> None:
    registered = {s.kernel_name for s in tp.kernels_for_backend("numpy")}
    assert set(K.CATALOGUE) - registered == set()
    assert all(s.source == "tensorplug-numpy" for s in tp.kernels_for_backend("numpy"))


def test_warnings_are_not_emitted_for_inf_and_nan_results() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.log(tp.tensor([0.0, -1.0]))
        tp.div(tp.tensor([1.0, 0.0]), tp.tensor([0.0, 0.0]))
        tp.sqrt(tp.tensor([-1.0]))
        tp.mean(tp.zeros((0,)))


def test_dispose_releases_storage_and_later_use_is_a_clear_error() -> None:
    x = tp.tensor([1.0, 2.0])
    y = x * 2.0
    x.dispose()
    assert x.is_disposed
    with pytest.raises(tp.TensorplugError, match="disposed"):
        x + 1.0
    with pytest.raises(tp.TensorplugError, match="disposed"):
        x.numpy()
    with pytest.raises(tp.TensorplugError, match="disposed"):
        _ = x.shape
    assert y.tolist() == [2.0, 4.0]


def test_memory_counts_live_tensors_and_shared_storage_once() -> None:
    import gc

    gc.collect()
    before = tp.memory()["numpy"]
    big = tp.zeros((1000,), dtype="float64")
    alias = tp.tensor(big)  # shares the storage
    after = tp.memory()["numpy"]
    assert after["tensors"] - before["tensors"] == 2
    assert after["bytes"] - before["bytes"] == 8000
    assert after["device"] == "cpu"
    del big, alias
    gc.collect()
    assert tp.memory()["numpy"]["bytes"] == before["bytes"]


class _WarnsWhenAskedItsClass:
    """As torch's deprecated module attributes do: reading ``__class__`` warns."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        warnings.warn("do not look at me", FutureWarning, stacklevel=2)
        return object


def test_memory_walks_live_objects_without_reading_their_class() -> None:
    noisy = _WarnsWhenAskedItsClass()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tp.memory()
    del noisy


def test_dlpack_round_trip_is_zero_copy_on_numpy() -> None:
    source = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = tp.from_dlpack(source)
    assert t.dtype == "float32"
    assert t.tolist() == source.tolist()
    assert np.shares_memory(t.numpy(), source)
    back = np.from_dlpack(t)
    assert np.shares_memory(back, source)
    scalar = tp.sum(tp.tensor([1.0, 2.0]))  # a 0-d result: a numpy scalar inside
    assert np.from_dlpack(scalar).item() == 3.0


def test_to_backend_makes_a_new_tensor(boxed: Any) -> None:
    x = tp.tensor([1.0, 2.0])
    y = x.to_backend("boxed")
    assert (x.backend, y.backend) == ("numpy", "boxed")
    assert y.tolist() == [1.0, 2.0]
    assert x.to_backend("numpy") is not x


def test_priority_may_be_a_function_asked_once() -> None:
    calls: list[int] = []

    def probe() -> int:
        calls.append(1)
        return 50

    tp.register_backend("probed", ListBackend, priority=probe)
    assert tp.list_backends()[0] == "probed"
    assert tp.list_backends()[0] == "probed"
    assert calls == [1]


def test_no_backend_because_autoload_is_disabled_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "specs", {})
    monkeypatch.setattr(engine, "active", None)
    monkeypatch.setattr(engine, "no_backend_hint", "TENSORPLUG_DISABLE_PLUGIN_AUTOLOAD is set, so ...")
    with pytest.raises(tp.NoBackendError, match=r"^No tensorplug backend is registered: TENSORPLUG_DISABLE"):
        tp.ones(2)


def test_obvious_fallback_mistakes_are_refused_when_registered() -> None:
    with pytest.raises(tp.RegistrationError, match=r"fallback='selfish'\): a backend cannot fall back to itself"):
        tp.register_backend("selfish", ListBackend, fallback="selfish")
    with pytest.raises(tp.RegistrationError, match="fallback must be a backend name or None, not 3"):
        tp.register_backend("numbered", ListBackend, fallback=3)  # type: ignore[arg-type]
    assert "selfish" not in tp.list_backends()
    assert "numbered" not in tp.list_backends()
