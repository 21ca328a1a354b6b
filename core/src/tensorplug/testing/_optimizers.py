"""Each optimizer's update rule stated once, and one check of both ways a backend runs it.

The rules below are the textbook formulas, on NumPy float64 arrays (Adam with its bias corrections written out,
not folded into host scalars as ``tp.train.Adam`` folds them; RMSProp with its momentum and centering; Adagrad
with its fixed epsilon). They are the reference for :func:`check_optimizer`, which runs an optimizer case for a
few steps, with a learning-rate schedule, on one backend:

- op by op (under ``tp.profile``, an observer, as ``tp.debug`` runs it): the variables and slots must match the
  reference within the dtype's tolerance;
- through the backend's fused update (``Backend.fused_update``), where the backend offers it and the kernels of
  the ops it stands for are the backend's own (else the optimizers never call it): the same
  tolerance against the reference, the same bits as the op-by-op run (what the fused-update contract promises),
  one call per variable and step, and none of its inputs written.

:func:`check_fused_updates` runs every case in float32 and float64 (those the backend supports).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

import tensorplug as tp
from tensorplug.train._fused import FUSED_UPDATES, fused_update

__all__ = ["OptimizerCase", "check_fused_updates", "check_optimizer", "optimizer_cases"]

Arrays = dict[str, np.ndarray]
"""A variable's state for a reference rule: ``"var"`` and the optimizer's slots, by slot name."""

Rule = Callable[[Arrays, np.ndarray, float, int, dict[str, Any]], Arrays]
"""``rule(state, grad, learning_rate, step, config) -> new state``, on float64 arrays; ``step`` counts from 1."""

EPSILON = 1e-7  # Adagrad's fixed epsilon, and Adam's and RMSProp's default (TensorFlow.js's on float32)


# -- the update rules --------------------------------------------------------------------------------------------


def sgd(s: Arrays, g: np.ndarray, lr: float, t: int, c: dict[str, Any]) -> Arrays:
    """``w -= lr * g``."""
    return {"var": s["var"] - lr * g}


def momentum(s: Arrays, g: np.ndarray, lr: float, t: int, c: dict[str, Any]) -> Arrays:
    """``a = momentum * a + g``; ``w -= lr * a``, or with Nesterov ``w -= lr * (g + momentum * a)``."""
    a = c["momentum"] * s["momentum"] + g
    direction = g + c["momentum"] * a if c.get("use_nesterov") else a
    return {"var": s["var"] - lr * direction, "momentum": a}


def adam(s: Arrays, g: np.ndarray, lr: float, t: int, c: dict[str, Any]) -> Arrays:
    """Kingma and Ba: moving moments, bias-corrected at step ``t``, ``w -= lr * m_hat / (sqrt(v_hat) + eps)``."""
    b1, b2, eps = c.get("beta1", 0.9), c.get("beta2", 0.999), c.get("epsilon", EPSILON)
    m = b1 * s["m"] + (1 - b1) * g
    v = b2 * s["v"] + (1 - b2) * g * g
    m_hat = m / (1 - b1**t)
    v_hat = v / (1 - b2**t)
    return {"var": s["var"] - lr * m_hat / (np.sqrt(v_hat) + eps), "m": m, "v": v}


def rms_prop(s: Arrays, g: np.ndarray, lr: float, t: int, c: dict[str, Any]) -> Arrays:
    """``ms = decay * ms + (1 - decay) * g**2`` (centered: ``mg`` likewise of ``g``, and ``ms - mg**2`` in the
    root); ``mom = momentum * mom + lr * g / sqrt(ms + eps)``; ``w -= mom``."""
    decay, eps, mu = c.get("decay", 0.9), c.get("epsilon", EPSILON), c.get("momentum", 0.0)
    new = {"rms": decay * s["rms"] + (1 - decay) * g * g}
    mean_square = new["rms"]
    if c.get("centered"):
        new["mg"] = decay * s["mg"] + (1 - decay) * g
        mean_square = mean_square - new["mg"] ** 2
    new["momentum"] = mu * s["momentum"] + lr * g / np.sqrt(mean_square + eps)
    new["var"] = s["var"] - new["momentum"]
    return new


def adagrad(s: Arrays, g: np.ndarray, lr: float, t: int, c: dict[str, Any]) -> Arrays:
    """``acc += g**2``; ``w -= lr * g / sqrt(acc + 1e-7)``."""
    acc = s["accumulator"] + g * g
    return {"var": s["var"] - lr * g / np.sqrt(acc + EPSILON), "accumulator": acc}


# -- the cases ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptimizerCase:
    """One optimizer with one set of options: ``tp.train.<optimizer>(learning_rate, **config)``, its reference
    ``rule``, and the fused update it runs on a backend that offers one."""

    optimizer: str
    option: str
    config: dict[str, Any]
    rule: Rule
    fused: str
    learning_rate: float = 0.1
    initial: float = 0.0
    """Every slot's value before the first step (Adagrad's ``initial_accumulator_value``)."""

    @property
    def id(self) -> str:
        return f"{self.optimizer}-{self.option}"

    def make(self) -> Any:
        """A fresh ``tp.train`` optimizer of this case."""
        return getattr(tp.train, self.optimizer)(self.learning_rate, **self.config)

    def start(self, var: np.ndarray) -> Arrays:
        """The reference state of a variable before its first step: its value and fresh slots, in float64."""
        slots: tuple[str, ...] = self.make().slot_names
        return {"var": np.asarray(var, np.float64), **{s: np.full(np.shape(var), self.initial) for s in slots}}

    def step(self, state: Arrays, grad: np.ndarray, step: int, learning_rate: float | None = None) -> Arrays:
        """The reference state after step ``step`` (from 1) with gradient ``grad``, in float64."""
        lr = self.learning_rate if learning_rate is None else learning_rate
        return self.rule(state, np.asarray(grad, np.float64), lr, step, self.config)


def optimizer_cases() -> tuple[OptimizerCase, ...]:
    """Every optimizer of ``tp.train`` with each of its options (hyper-parameters away from the defaults, so that
    a mixed-up pair shows)."""
    return (
        OptimizerCase("SGD", "plain", {}, sgd, "ApplyGradientDescent"),
        OptimizerCase("Momentum", "plain", {"momentum": 0.9}, momentum, "ApplyMomentum"),
        OptimizerCase("Momentum", "nesterov", {"momentum": 0.8, "use_nesterov": True}, momentum, "ApplyMomentum"),
        OptimizerCase("Adam", "defaults", {}, adam, "ApplyAdam", learning_rate=0.01),
        OptimizerCase(
            "Adam", "betas", {"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-3}, adam, "ApplyAdam", learning_rate=0.05
        ),
        OptimizerCase("RMSProp", "plain", {"decay": 0.8}, rms_prop, "ApplyRMSProp", learning_rate=0.01),
        OptimizerCase("RMSProp", "momentum", {"momentum": 0.9}, rms_prop, "ApplyRMSProp", learning_rate=0.01),
        OptimizerCase("RMSProp", "centered", {"centered": True}, rms_prop, "ApplyRMSProp", learning_rate=0.01),
        OptimizerCase(
            "RMSProp",
            "centered-momentum",
            {"momentum": 0.5, "centered": True, "epsilon": 1e-3},
            rms_prop,
            "ApplyRMSProp",
            learning_rate=0.01,
        ),
        OptimizerCase("Adagrad", "plain", {"initial_accumulator_value": 0.2}, adagrad, "ApplyAdagrad", initial=0.2),
    )


# -- the check ---------------------------------------------------------------------------------------------------

SHAPES: tuple[tuple[int, ...], ...] = ((3, 4), (), (5,))  # a 0-d variable too: NumPy makes scalars of it
TOLERANCES = {"float64": (1e-10, 1e-12), "float32": (1e-4, 1e-5)}  # (rtol, atol) against the float64 reference


def schedule(case: OptimizerCase, step: int) -> float:
    """The learning rate of ``step``: halved from the third step on (hyper-parameters are read at every step)."""
    return case.learning_rate if step < 3 else case.learning_rate / 2


def check_fused_updates(backend: str | None = None, steps: int = 4) -> None:
    """Run :func:`check_optimizer` for every case of :func:`optimizer_cases` in float32 and float64 (those
    ``backend`` supports) on ``backend`` (the active one by default). Raises AssertionError at the first failure.

    >>> import tensorplug as tp
    >>> tp.testing.check_fused_updates("numpy")
    """
    name = backend if backend is not None else tp.get_backend()
    for dtype in ("float32", "float64"):
        if dtype in tp.backend(name).unsupported_dtypes:
            continue
        for case in optimizer_cases():
            check_optimizer(case, name, dtype, steps)


def check_optimizer(case: OptimizerCase, backend: str, dtype: str = "float32", steps: int = 4) -> None:
    """Check one case on ``backend`` for ``steps`` steps: op by op and (where the backend offers it) fused,
    each against the reference rule, and fused against op by op, bit for bit. AssertionError names the optimizer,
    its option, the backend, the dtype, the step and what differs."""
    where = f"{case.optimizer} ({case.option}) on backend {backend!r}, {dtype}"
    previous = tp.get_backend()
    tp.set_backend(backend)
    try:
        (spec,) = [update for update in FUSED_UPDATES if update == case.fused]
        offered = fused_update(spec) is not None  # offered, and its ops' kernels are the backend's own
        expected = _reference(case, dtype, steps)
        ops = _run(case, dtype, steps, where, fused=False)
        _compare(ops, expected, dtype, f"{where}, op by op")
        if offered:
            fused = _run(case, dtype, steps, where, fused=True)
            _compare(fused, expected, dtype, f"{where}, fused update {case.fused}")
            _same_bits(fused, ops, f"{where}: the fused update {case.fused}")
    finally:
        tp.set_backend(previous)


def _start(dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _gradients(step: int, dtype: str) -> list[np.ndarray]:
    rng = np.random.default_rng(step)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _reference(case: OptimizerCase, dtype: str, steps: int) -> list[list[Arrays]]:
    """Per step, per variable: the reference state, in float64, from the dtype's start and gradients."""
    states = [case.start(w) for w in _start(dtype)]
    history = []
    for step in range(1, steps + 1):
        grads = _gradients(step, dtype)
        lr = schedule(case, step)
        states = [case.step(s, g, step, lr) for s, g in zip(states, grads, strict=True)]
        history.append(states)
    return history


def _run(case: OptimizerCase, dtype: str, steps: int, where: str, *, fused: bool) -> list[list[Arrays]]:
    """Per step, per variable: the state ``tp.train`` gives, op by op or through the fused update."""
    optimizer = case.make()
    slots = optimizer.slot_names
    variables = [tp.variable(w, name=f"check_optimizer/{case.id}/{i}") for i, w in enumerate(_start(dtype))]
    history = []
    for step in range(1, steps + 1):
        optimizer.learning_rate = schedule(case, step)
        grads = [tp.tensor(g) for g in _gradients(step, dtype)]
        pairs = dict(zip(variables, grads, strict=True))
        if fused:
            with _counted(case.fused) as calls, _unchanged(variables, optimizer, grads, f"{where}, step {step}"):
                optimizer.apply_gradients(pairs)
            if len(calls) != len(variables):
                raise AssertionError(
                    f"{where}, step {step}: the backend offers {case.fused} but the step called it {len(calls)} times "
                    f"for {len(variables)} variables"
                )
        else:
            profile = tp.profile(lambda: optimizer.apply_gradients(pairs))  # noqa: B023 (called at once)
            if any(name.startswith("Apply") for name in profile.kernel_names):
                raise AssertionError(f"{where}, step {step}: an observed step ran a fused update, not its ops")
        weights = dict(optimizer.get_weights()[1:])
        history.append([{"var": v.numpy(), **{s: weights[f"{v.name}/{s}"].numpy() for s in slots}} for v in variables])
    return history


@contextmanager
def _counted(name: str) -> Iterator[list[int]]:
    """Count the calls of the active backend's fused update ``name`` (the backend object's own method, wrapped for
    the block)."""
    backend = tp.backend()
    offer = backend.fused_update
    calls: list[int] = []

    def counting(asked: str) -> Any:
        fn = offer(asked)
        if fn is None or asked != name:
            return fn

        def counted(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
            calls.append(1)
            return fn(inputs, attrs, backend)

        return counted

    backend.fused_update = counting  # type: ignore[method-assign, assignment]
    try:
        yield calls
    finally:
        del backend.fused_update


@contextmanager
def _unchanged(variables: Sequence[Any], optimizer: Any, grads: Sequence[Any], where: str) -> Iterator[None]:
    """Fail if the block changes the values that the variables, their slots or the gradients held before it (a
    fused update must never write its inputs: tensors sharing their storage would see it)."""
    shared = [tp.tensor(v) for v in variables] + [tp.tensor(w) for _, w in optimizer.get_weights()[1:]] + list(grads)
    before = [t.numpy().copy() for t in shared]
    yield
    for t, old in zip(shared, before, strict=True):
        if t.numpy().tobytes() != old.tobytes():
            raise AssertionError(f"{where}: the fused update wrote one of its inputs ({old!r} became {t.numpy()!r})")


def _compare(got: list[list[Arrays]], want: list[list[Arrays]], dtype: str, where: str) -> None:
    rtol, atol = TOLERANCES[dtype]
    for step, (by_variable, expected) in enumerate(zip(got, want, strict=True), start=1):
        for i, (state, reference) in enumerate(zip(by_variable, expected, strict=True)):
            for key, value in reference.items():
                actual = state[key].astype(np.float64)
                if not np.allclose(actual, value, rtol=rtol, atol=atol):
                    error = float(np.max(np.abs(actual - value)))
                    raise AssertionError(
                        f"{where}, step {step}: {key} of variable {i} (shape {list(value.shape)}) differs from the "
                        f"reference formula by up to {error:.3g} (rtol {rtol}, atol {atol}): got {actual!r}, "
                        f"expected {value!r}"
                    )


def _same_bits(fused: list[list[Arrays]], ops: list[list[Arrays]], where: str) -> None:
    """What the fused-update contract promises: the ops' library calls in their order, so the ops' bits."""
    for step, (by_variable, expected) in enumerate(zip(fused, ops, strict=True), start=1):
        for i, (got, want) in enumerate(zip(by_variable, expected, strict=True)):
            for key, value in want.items():
                if got[key].tobytes() != value.tobytes():
                    raise AssertionError(
                        f"{where}, step {step}: {key} of variable {i} has other bits than the ops give: fused "
                        f"{got[key]!r}, ops {value!r}; a fused update must make the ops' library calls in their order"
                    )
