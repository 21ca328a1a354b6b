"""tp.train's fused updates: the numpy backend passes the shared optimizer check (each optimizer op by op and
fused against its update rule, fused bit for bit as the ops, no input written), which fails a wrong fused update;
a step whose update fails leaves every variable, slot and the step count as they were."""

from __future__ import annotations

import pydoc
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorplug as tp
from tensorplug_numpy._train import FUSED_UPDATES, apply_momentum

OPTIMIZERS: dict[str, tuple[str, Callable[[], tp.train.Optimizer]]] = {
    "SGD": ("ApplyGradientDescent", lambda: tp.train.SGD(0.1)),
    "Momentum": ("ApplyMomentum", lambda: tp.train.Momentum(0.1, 0.9)),
    "Nesterov": ("ApplyMomentum", lambda: tp.train.Momentum(0.1, 0.9, use_nesterov=True)),
    "Adam": ("ApplyAdam", lambda: tp.train.Adam(0.01)),
    "RMSProp": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01)),
    "RMSProp-momentum": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01, momentum=0.9)),
    "RMSProp-centered": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01, centered=True)),
    "RMSProp-centered-momentum": ("ApplyRMSProp", lambda: tp.train.RMSProp(0.01, momentum=0.9, centered=True)),
    "Adagrad": ("ApplyAdagrad", lambda: tp.train.Adagrad(0.1)),
}
SHAPES = [(3, 4), (), (5,)]  # a 0-d variable too: NumPy gives scalars there, which cannot be written into


def variables(dtype: str, prefix: str) -> list[tp.Variable]:
    rng = np.random.default_rng(0)
    return [tp.variable(rng.standard_normal(s).astype(dtype), name=f"{prefix}{i}") for i, s in enumerate(SHAPES)]


def gradients(step: int, dtype: str) -> list[tp.Tensor]:
    rng = np.random.default_rng(step + 1)
    return [tp.tensor(rng.standard_normal(s).astype(dtype)) for s in SHAPES]


def state_bytes(vs: list[tp.Variable], opt: tp.train.Optimizer) -> list[bytes]:
    return [v.numpy().tobytes() for v in vs] + [w.numpy().tobytes() for _, w in opt.get_weights()]


CASES = {case.id: case for case in tp.testing.optimizer_cases()}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case_id", list(CASES))
def test_numpy_passes_the_shared_optimizer_check(case_id: str, dtype: str) -> None:
    """Op by op and fused, each against the update rule; fused and op by op bit for bit; no input written."""
    tp.testing.check_optimizer(CASES[case_id], "numpy", dtype)


def wrong_adam(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Adam whose second moment takes the gradient, not its square."""
    m = inputs["m"] * inputs["beta1"] + inputs["grad"] * inputs["one_minus_beta1"]
    v = inputs["v"] * inputs["beta2"] + inputs["grad"] * inputs["one_minus_beta2"]
    var = inputs["var"] - m / (np.sqrt(np.abs(v)) + inputs["epsilon"]) * inputs["step_size"]
    return [var, m, v]


def momentum_without_nesterov(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return apply_momentum(inputs, {"use_nesterov": False}, backend)


def sgd_in_another_order(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Right within rounding, but not the ops' calls: computed in float64, rounded once at the end."""
    var = np.asarray(inputs["var"])
    wide = var.astype(np.float64) - np.asarray(inputs["delta"], np.float64) * np.asarray(inputs["alpha"], np.float64)
    return [wide.astype(var.dtype)]


def sgd_in_place(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    var = inputs["var"]
    if isinstance(var, np.ndarray) and var.ndim:
        var -= inputs["delta"] * inputs["alpha"]
        return [var.copy()]
    return [var - inputs["delta"] * inputs["alpha"]]


@pytest.mark.parametrize(
    ("case_id", "name", "wrong", "message"),
    [
        (
            "Adam-defaults",
            "ApplyAdam",
            wrong_adam,
            r"Adam \(defaults\) on backend 'numpy', float32, fused update ApplyAdam, step 1: "
            r"var of variable 0 .* differs from the reference formula",
        ),
        (
            "Momentum-nesterov",
            "ApplyMomentum",
            momentum_without_nesterov,
            r"Momentum \(nesterov\) on backend "
            r"'numpy', float32, fused update ApplyMomentum, step 1: var of variable 0 .* differs from the reference",
        ),
        (
            "SGD-plain",
            "ApplyGradientDescent",
            sgd_in_another_order,
            r"SGD \(plain\) on backend 'numpy', float32: "
            r"the fused update ApplyGradientDescent, step \d: var of variable \d has other bits than the ops give",
        ),
        (
            "SGD-plain",
            "ApplyGradientDescent",
            sgd_in_place,
            r"SGD \(plain\) on backend 'numpy', float32, "
            r"step 1: the fused update wrote one of its inputs",
        ),
    ],
    ids=["adam-without-square", "nesterov-ignored", "other-bits", "writes-its-input"],
)
def test_the_shared_check_fails_a_wrong_fused_update(
    case_id: str, name: str, wrong: Any, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FUSED_UPDATES, name, wrong)
    with pytest.raises(AssertionError, match=message):
        tp.testing.check_optimizer(CASES[case_id], "numpy", "float32")


@pytest.mark.usefixtures("tensorplug_registries")
def test_the_shared_check_runs_ops_only_where_the_fused_update_would_not_be_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A kernel of the ops registered over the backend's own: the optimizers run the ops, and so does the check."""
    from tensorplug_numpy._binary import multiply

    monkeypatch.setitem(FUSED_UPDATES, "ApplyGradientDescent", sgd_in_place)  # would fail, were it called
    with pytest.warns(tp.PluginWarning, match="shadows"):
        tp.register_kernel("Multiply", "numpy", multiply, override=True)
    tp.testing.check_optimizer(CASES["SGD-plain"], "numpy", "float32")


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_a_step_whose_fused_update_fails_changes_nothing(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    name, make = OPTIMIZERS[kind]
    run = FUSED_UPDATES[name]
    vs = variables("float32", f"fails-{kind}")
    opt = make()
    opt.apply_gradients(dict(zip(vs, gradients(0, "float32"), strict=True)))
    before = state_bytes(vs, opt)
    calls = []

    def second_fails(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise MemoryError("no room")
        return run(inputs, attrs, backend)

    monkeypatch.setitem(FUSED_UPDATES, name, second_fails)
    with pytest.raises(
        tp.KernelError, match=rf"fused update '{name}' on backend 'numpy' failed for inputs var=float32\[\]"
    ):
        opt.apply_gradients(dict(zip(vs, gradients(1, "float32"), strict=True)))
    assert calls == [1, 1]
    assert state_bytes(vs, opt) == before
    assert opt.iterations == 1


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_registered_over_one_of_the_ops_is_still_called() -> None:
    """The fused update stands for the backend's own Multiply and Sub: one the user put in their place runs."""
    from tensorplug_numpy._binary import multiply as run

    calls = []

    def multiply(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return run(inputs, attrs, backend)

    with pytest.warns(tp.PluginWarning, match="shadows"):
        tp.register_kernel("Multiply", "numpy", multiply, override=True)
    vs = variables("float32", "user-multiply")
    tp.train.SGD(0.1).apply_gradients(dict(zip(vs, gradients(0, "float32"), strict=True)))
    assert calls == [1] * len(vs)


@pytest.mark.usefixtures("tensorplug_registries")
def test_a_kernel_registered_after_fused_steps_is_called_by_the_next_step() -> None:
    """Which fused updates a step may use is looked up again once a kernel is registered: a step after it runs
    the ops, calling the user's kernel."""
    from tensorplug_numpy._binary import sub as run

    calls = []

    def subtract(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        calls.append(1)
        return run(inputs, attrs, backend)

    vs = variables("float32", "user-sub-later")
    optimizer = tp.train.SGD(0.1)
    for _ in range(2):  # fused steps
        optimizer.apply_gradients(dict(zip(vs, gradients(0, "float32"), strict=True)))
    with pytest.warns(tp.PluginWarning, match="shadows"):
        tp.register_kernel("Sub", "numpy", subtract, override=True)
    optimizer.apply_gradients(dict(zip(vs, gradients(0, "float32"), strict=True)))
    assert calls == [1] * len(vs)


# -- what each fused update takes and returns: documented on its constant, and what the optimizers pass ---------------

DECLARED = {  # name -> (tensors, 0-d scalars, attrs, outputs), as docs/authoring.md's table lists them
    "ApplyGradientDescent": ("var, delta", "alpha", "none", "var"),
    "ApplyMomentum": ("var, accum, grad", "lr, momentum", "use_nesterov (bools)", "var, accum"),
    "ApplyAdam": (
        "var, m, v, grad",
        "beta1, one_minus_beta1, beta2, one_minus_beta2, step_size, epsilon",
        "none",
        "var, m, v",
    ),
    "ApplyRMSProp": (
        "var, ms, mom, mg, grad",
        "lr, rho, one_minus_rho, momentum, epsilon",
        "centered, use_momentum (bools)",
        "var, ms, mom, mg",
    ),
    "ApplyAdagrad": ("var, accum, grad", "lr, epsilon", "none", "var, accum"),
}


@pytest.mark.parametrize("name", list(DECLARED))
def test_help_of_a_fused_update_constant_gives_its_inputs_attrs_and_outputs(name: str) -> None:
    (update,) = [u for u in tp.train.FUSED_UPDATES if u == name]
    text = pydoc.render_doc(update, renderer=pydoc.plaintext)
    tensors, scalars, attrs, outputs = DECLARED[name]
    assert f"{name}: the update of tp.train." in text
    assert f"{tensors}: of the variable's shape" in text
    assert f"{scalars}: 0-d (a step's host numbers)" in text
    assert f"Attrs: {attrs}" in text
    assert f"Outputs, in this order: {outputs} (new storage; the inputs are never written)" in text


def test_the_constants_are_their_names_to_a_backend() -> None:
    """A backend's table keyed by the name strings finds each constant, and str() gives the name."""
    assert tp.train.APPLY_ADAM == "ApplyAdam"
    assert {"ApplyAdam": 1}[tp.train.APPLY_ADAM] == 1
    assert {tp.train.APPLY_ADAM: 1}["ApplyAdam"] == 1
    assert f"{tp.train.APPLY_ADAGRAD}" == "ApplyAdagrad"
    assert sorted(str(u) for u in tp.train.FUSED_UPDATES) == sorted(DECLARED)


@pytest.mark.parametrize("kind", list(OPTIMIZERS))
def test_an_optimizer_passes_its_fused_update_what_the_constant_declares(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    name, make = OPTIMIZERS[kind]
    (update,) = [u for u in tp.train.FUSED_UPDATES if u == name]
    tensors, scalars, attrs, outputs = (part.replace(" (bools)", "") for part in DECLARED[name])
    run = FUSED_UPDATES[name]
    seen: list[tuple[list[str], list[str], int]] = []

    def checked(inputs: dict[str, Any], given: dict[str, Any], backend: Any) -> Any:
        var = inputs["var"]
        for key in tensors.split(", "):
            if key in inputs:
                assert inputs[key].shape == var.shape, key
        for key in scalars.split(", "):
            assert np.ndim(inputs[key]) == 0, key
            assert inputs[key].dtype == var.dtype, key
        result = run(inputs, given, backend)
        seen.append((list(inputs), sorted(given), len(result)))
        return result

    monkeypatch.setitem(FUSED_UPDATES, name, checked)
    vs = variables("float32", f"declared_{kind}_")
    make().apply_gradients(dict(zip(vs, gradients(0, "float32"), strict=True)))
    assert len(seen) == len(SHAPES)
    keys, given, count = seen[0]
    declared = [*tensors.split(", "), *scalars.split(", ")]
    centered = "centered" in kind
    assert sorted(keys) == sorted(k for k in declared if k != "mg" or centered)
    assert given == ([] if attrs == "none" else sorted(attrs.split(", ")))
    assert count == len([o for o in outputs.split(", ") if o != "mg" or centered])
    assert set(update.inputs) == set(declared)
