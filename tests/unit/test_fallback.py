"""Fallback for partial backends: kernels a backend lacks run on its fallback backend, with the data moved.

The partial backend here, "box", keeps numpy arrays in a box (so its storage
is visibly not numpy's) and has three kernels of its own; everything else
runs on "numpy" through the fallback.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from box_backend import BoxBackend, Boxed, box_add, box_multiply, box_neg

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._engine import FallbackKernel, engine
from tensorplug.testing import Case, all_cases, run_case

NATIVE = {K.ADD: box_add, K.MULTIPLY: box_multiply, K.NEG: box_neg}
# Kernels run through the fallback by the conformance test: unary, reductions, matmul, a list input (Concat),
# several outputs (TopK, SplitV, Unpack), index errors raised by the fallback's kernel (GatherV2).
THROUGH_FALLBACK = (K.EXP, K.SIN, K.TANH, K.SUM, K.MAX, K.BATCH_MAT_MUL, K.CONCAT, K.TOP_K, K.SPLIT_V, K.UNPACK)
THROUGH_FALLBACK += (K.GATHER_V2,)
CASES = [c for c in all_cases() if c.kernel in THROUGH_FALLBACK or c.kernel in NATIVE]


def _register_box(name: str = "box", fallback: str | None = "numpy") -> None:
    tp.register_backend(name, BoxBackend, priority=-5, fallback=fallback)
    for kernel, fn in NATIVE.items():
        tp.register_kernel(kernel, name, fn)


@pytest.fixture
def box(tensorplug_registries: None) -> BoxBackend:
    """The partial backend, active; its kernels go with ``tensorplug_registries``, the backend with the unit
    conftest's fixture."""
    _register_box()
    tp.set_backend("box")
    backend = tp.backend()
    assert isinstance(backend, BoxBackend)
    return backend


def _fallback_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, tp.FallbackWarning)]


# -- the conformance suite through the fallback -------------------------------------------------------------------


def test_the_chosen_kernels_have_cases() -> None:
    assert {c.kernel for c in CASES} == set(THROUGH_FALLBACK) | set(NATIVE)


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case_through_the_fallback(box: BoxBackend, case: Case) -> None:
    run_case(case)  # values, dtypes, error messages, and second-order gradients where the case asks
    assert tp.get_backend() == "box"


def test_results_live_on_the_active_backend(box: BoxBackend) -> None:
    x = tp.tensor([[0.5, -1.0], [2.0, 3.0]])
    with pytest.warns(tp.FallbackWarning):
        outputs = [tp.exp(x), tp.sum(x, axis=0), tp.concat([x, x], 0), *tp.top_k(x, 1), *tp.unstack(x)]
    for out in outputs:
        assert out.backend == "box"
        assert isinstance(out.raw, Boxed)
    np.testing.assert_allclose(outputs[0].numpy(), np.exp(x.numpy()), rtol=1e-6)
    assert x.backend == "box"  # the inputs stay where they were
    assert isinstance(engine.table[K.EXP], FallbackKernel)
    assert engine.table[K.EXP].target.name == "numpy"
    assert (x + x).backend == "box"
    assert engine.table[K.ADD] is box_add  # native kernels are untouched


def test_data_is_moved_to_the_fallback_and_back(box: BoxBackend) -> None:
    x = tp.tensor([1.0, 2.0])
    before = box.moved_in
    with pytest.warns(tp.FallbackWarning):
        tp.concat([x, x, x], 0)
    assert box.moved_in == before + 1  # one result moved back
    before = box.moved_in
    with pytest.warns(tp.FallbackWarning):
        tp.split(x, 2)
    assert box.moved_in == before + 2  # two results


# -- one warning per kernel -----------------------------------------------------------------------------------------


def test_each_kernel_warns_once_naming_kernel_backends_and_how_to_silence(box: BoxBackend) -> None:
    x = tp.tensor([0.1, 0.2, 0.3])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            tp.sin(x)
            tp.exp(x)
            tp.neg(x)  # native: never warns
            tp.grad(lambda x: tp.sum(tp.sin(x)))(x)
    messages = _fallback_warnings(caught)
    kernels = [m.split("no kernel ")[1].split(";")[0] for m in messages]
    assert sorted(kernels) == sorted(set(kernels))  # no kernel twice
    assert {"'Sin'", "'Exp'", "'Sum'", "'Cos'"} <= set(kernels)
    assert "'Neg'" not in kernels
    sin = next(m for m in messages if "'Sin'" in m)
    assert "backend 'box'" in sin
    assert "fallback backend 'numpy'" in sin
    assert "tp.register_kernel('Sin', 'box', fn)" in sin
    assert "category=tp.FallbackWarning" in sin


def test_the_warning_can_be_silenced_with_a_filter(box: BoxBackend) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=tp.FallbackWarning)
        assert tp.sin(tp.tensor([0.0])).tolist() == [0.0]


def test_no_second_warning_when_the_table_is_rebuilt(box: BoxBackend) -> None:
    x = tp.tensor([1.0])
    with pytest.warns(tp.FallbackWarning):
        tp.sin(x)
    tp.register_kernel(K.SUB, "box", lambda inputs, attrs, backend: Boxed(inputs["a"].array - inputs["b"].array))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tp.sin(x)
    assert _fallback_warnings(caught) == []


def test_fallback_warning_is_exported_and_a_user_warning() -> None:
    assert tp.FallbackWarning is not tp.PluginWarning
    assert issubclass(tp.FallbackWarning, UserWarning)
    assert "FallbackWarning" in tp.__all__


# -- gradients ----------------------------------------------------------------------------------------------------


def _loss(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
    h = tp.tanh(tp.matmul(x, w))
    return tp.sum(tp.concat([tp.sin(h), -h * h], 1)) + tp.max(tp.exp(w))


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_gradients_through_fallback_kernels_match_the_fallback_backends(box: BoxBackend) -> None:
    rng = np.random.default_rng(0)
    x_host, w_host = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    tp.set_backend("numpy")
    x, w = tp.tensor(x_host, "float64"), tp.tensor(w_host, "float64")
    expected = [g.numpy() for g in tp.grads(_loss)([x, w])]
    second = tp.grad(lambda x: tp.sum(tp.grad(lambda x: _loss(x, w))(x) ** 2))(x).numpy()
    tp.set_backend("box")
    x, w = tp.tensor(x_host, "float64"), tp.tensor(w_host, "float64")
    got = tp.grads(_loss)([x, w])
    assert all(g.backend == "box" for g in got)
    for g, want in zip(got, expected, strict=True):
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    got_second = tp.grad(lambda x: tp.sum(tp.grad(lambda x: _loss(x, w))(x) ** 2))(x)
    np.testing.assert_allclose(got_second.numpy(), second, rtol=1e-12)
    tp.testing.check_grads(_loss, [x, w], order=2)


# -- chains, cycles, unknown names ----------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_a_chain_runs_each_kernel_on_the_first_backend_that_has_it(box: BoxBackend) -> None:
    tp.register_backend("outer", BoxBackend, fallback="box")  # no kernels of its own
    tp.set_backend("outer")
    x = tp.tensor([1.0, 2.0])
    assert (x + x).tolist() == [2.0, 4.0]
    assert tp.exp(x).backend == "outer"
    assert engine.table[K.ADD].target.name == "box"  # type: ignore[attr-defined]
    assert engine.table[K.EXP].target.name == "numpy"  # type: ignore[attr-defined]  # straight there


def test_a_cycle_is_refused_when_it_is_registered() -> None:
    tp.register_backend("a", BoxBackend, fallback="b")  # "b" may come later
    with pytest.raises(tp.RegistrationError, match=r"cycle \(b -> a -> b\)"):
        tp.register_backend("b", BoxBackend, fallback="a")
    with pytest.raises(tp.RegistrationError, match=r"cycle \(c -> c\)"):
        tp.register_backend("c", BoxBackend, fallback="c")
    with pytest.raises(tp.RegistrationError, match="fallback must be a backend name"):
        engine.add_backend(tp.BackendSpec("d", BoxBackend, fallback=""))
    assert "b" not in tp.list_backends()


def test_a_cycle_that_got_past_registration_is_reported_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    tp.register_backend("a", BoxBackend, fallback="b")
    monkeypatch.setitem(engine.specs, "b", tp.BackendSpec("b", BoxBackend, fallback="a"))
    tp.set_backend("a")
    with pytest.raises(tp.BackendError, match="fallbacks of backend 'a' form a cycle: a -> b"):
        tp.sin(tp.tensor([1.0]))


@pytest.mark.usefixtures("tensorplug_registries")
def test_an_unknown_fallback_is_reported_when_a_kernel_falls_back() -> None:
    _register_box("lost", fallback="nowhere")
    tp.set_backend("lost")
    x = tp.tensor([1.0])
    assert (x + x).tolist() == [2.0]  # its own kernels work
    with pytest.raises(tp.BackendError, match=r"'lost' has no kernel 'Sin' and falls back to 'nowhere', which"):
        tp.sin(x)


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_fallback_that_fails_to_initialise_is_named() -> None:
    def broken() -> tp.Backend:
        raise RuntimeError("no device")

    tp.register_backend("broken", broken, priority=-10)
    _register_box("leaning", fallback="broken")
    tp.register_kernel(K.SIN, "broken", lambda inputs, attrs, backend: inputs["x"])
    tp.set_backend("leaning")
    with pytest.raises(tp.BackendError, match=r"fallback backend 'broken' failed to initialise.*no device"):
        tp.sin(tp.tensor([1.0]))


def test_a_plugin_style_spec_declares_a_fallback() -> None:
    engine.add_backend(tp.BackendSpec("declared", BoxBackend, -5, "some-dist", fallback="numpy"))
    tp.set_backend("declared")
    with pytest.warns(tp.FallbackWarning, match="'declared' has no kernel 'Add'"):
        assert (tp.tensor([1.0]) + 1.0).tolist() == [2.0]


# -- the dispatch tables follow registrations ----------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_a_kernel_registered_later_replaces_the_fallback(box: BoxBackend) -> None:
    x = tp.tensor([0.0, 1.0])
    tp.sin(x)
    assert isinstance(engine.table[K.SIN], FallbackKernel)
    calls = []

    def box_sin(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return Boxed(np.sin(inputs["x"].array))

    tp.register_kernel(K.SIN, "box", box_sin)
    tp.sin(x)
    assert calls == [1]
    tp.unregister_kernel(K.SIN, "box")
    tp.sin(x)
    assert calls == [1]
    assert isinstance(engine.table[K.SIN], FallbackKernel)


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_an_override_on_the_fallback_backend_is_seen(box: BoxBackend) -> None:
    x = tp.tensor([0.0, 1.0])  # ``box`` brings ``tensorplug_registries``: the override goes even if the test fails
    assert tp.sin(x).tolist() == [0.0, pytest.approx(np.sin(1.0))]
    tp.register_kernel(K.SIN, "numpy", lambda inputs, attrs, backend: inputs["x"] * 0 + 7, override=True)
    assert tp.sin(x).tolist() == [7.0, 7.0]
    tp.unregister_kernel(K.SIN, "numpy")
    assert tp.sin(x).tolist() == [0.0, pytest.approx(np.sin(1.0))]


@pytest.mark.filterwarnings("ignore::tensorplug.FallbackWarning")
def test_a_kernel_failing_on_the_fallback_says_where_it_ran(box: BoxBackend) -> None:
    with pytest.raises(tp.KernelError, match=r"'GatherV2' on backend 'box' \(run on its fallback backend 'numpy'\)"):
        tp.gather(tp.tensor([1.0, 2.0]), tp.tensor([5]))


# -- without a fallback: the missing-kernel error --------------------------------------------------------------------


@pytest.mark.usefixtures("tensorplug_registries")
def test_missing_kernel_error_lists_who_has_it_and_from_which_distribution() -> None:
    _register_box("bare", fallback=None)
    tp.register_backend("other", BoxBackend, priority=-9)
    tp.register_kernel(K.SIN, "other", lambda inputs, attrs, backend: inputs["x"])
    tp.set_backend("bare")
    with pytest.raises(tp.KernelNotFoundError) as info:
        tp.sin(tp.tensor([1.0]))
    message = str(info.value)
    assert message.startswith("No kernel 'Sin' is registered for backend 'bare'. Backends that have it: ")
    assert "numpy (from tensorplug-numpy)" in message
    assert "other (registered at runtime)" in message
    assert "tp.register_kernel('Sin', 'bare', fn)" in message
    best = next(name for name in tp.list_backends() if tp.get_kernel(K.SIN, name) is not None)  # by priority
    assert f"tp.set_backend({best!r})" in message
    assert f"fallback={best!r}" in message


def test_missing_kernel_error_with_a_fallback_that_lacks_it_too(box: BoxBackend) -> None:
    with pytest.raises(tp.KernelNotFoundError) as info:
        tp.run_kernel("NoSuchKernel", {})
    assert str(info.value) == (
        "No kernel 'NoSuchKernel' is registered for backend 'box' (nor for its fallback chain: numpy). "
        "No backend has it; register one with tp.register_kernel('NoSuchKernel', 'box', fn)."
    )


def test_coverage_lists_what_runs_through_the_fallback(box: BoxBackend) -> None:
    listing = tp.coverage()
    row = next(r for r in listing.rows if r.kernel == "Add")
    assert row.backends["box"] == "runtime"
    exp = next(r for r in listing.rows if r.kernel == "Exp")
    assert exp.backends["box"] == "fallback:numpy"
    assert listing.missing_for("box") == []
    decomposed = listing.decomposed_for("box")  # composites of other kernels: run as box's ops, not moved
    assert "Softsign" in decomposed
    assert len(listing.fallback_for("box")) == len(listing.rows) - listing.kernels_for("box") - len(decomposed)
    assert "box: 3 + " in listing.summary()
