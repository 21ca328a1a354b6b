"""Optimizers, as TensorFlow.js's ``tf.train``: SGD, Momentum, Adam, RMSProp and Adagrad.

``minimize(loss_fn, var_list=None)`` computes the loss and its gradients
with :func:`tensorplug.variable_grads` (every trainable float variable by
default), applies them and returns the loss; ``apply_gradients(grads)``
applies gradients computed elsewhere. Updates are written with ops, so they
run on whichever backend is active, and assign each variable its new value.

An optimizer keeps its state (its "slots", e.g. Adam's moment estimates) per
Variable object, created with zeros at the variable's first update, and
forgets a variable's state when the variable is collected.

A step that raises (a kernel's error, a NaN found by ``tp.debug``) changes nothing: the variables, the
slots and ``iterations`` are left as they were, in an eager step as in a ``tp.function`` replay. The
hyper-parameters (``learning_rate``, ``momentum``, ``beta1``...) are read at each step, so they may be
changed between steps (a learning-rate schedule), eagerly and in ``tp.function`` replays alike.

Where this differs from TensorFlow.js: state is kept per Variable (TensorFlow.js
keeps it by position in the gradient map, so a map with other variables mixes
their states up); ``apply_gradients`` checks every entry before it changes
anything, and refuses unknown names; ``minimize`` always returns the loss;
Adam's bias corrections are computed on the host in float64 (TensorFlow.js
keeps ``beta**t`` in float32 variables); centered RMSProp adds epsilon where
TensorFlow.js subtracts it (see :class:`RMSProp`).

>>> import tensorplug as tp
>>> w = tp.variable([3.0, -2.0], name="train_doc_w")
>>> target = tp.tensor([1.0, 2.0])
>>> opt = tp.train.SGD(0.25)
>>> for _ in range(20):
...     loss = opt.minimize(lambda: tp.sum(tp.square(w - target)), [w])
>>> [round(x, 4) for x in w.tolist()], opt.iterations
([1.0, 2.0], 20)
"""

from __future__ import annotations

import math
import numbers
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from tensorplug._autodiff import variable_grads
from tensorplug._dtypes import is_floating
from tensorplug._errors import DTypeError, ShapeError, TensorplugError
from tensorplug._lazy import persist_lazy
from tensorplug._state import no_grad, state
from tensorplug._tensor import Tensor, Variable, describe, live_variables, wrap_storage
from tensorplug.ops import add, div, fill, mul, sqrt, square, sub, tensor, zeros_like

__all__ = ["SGD", "Adagrad", "Adam", "Momentum", "Optimizer", "OptimizerError", "RMSProp"]

FLOAT_EPSILON = 1e-7
"""TensorFlow.js's ``backend.epsilon()`` on float32: Adam's and RMSProp's default epsilon, Adagrad's fixed one."""

GradientMap = Mapping[str, Tensor | None] | Mapping[Variable, Tensor | None] | Mapping[str | Variable, Tensor | None]
"""What ``apply_gradients`` takes: a gradient per variable, keyed by variable name or by the Variable itself."""

Update = tuple[Variable, Tensor, list[Tensor]]
"""One variable's share of a step: the variable, its gradient, and its slots (replaced in the list by the update)."""


class OptimizerError(TensorplugError, ValueError):
    """An optimizer got a bad hyper-parameter, or gradients it cannot apply."""


class Optimizer:
    """Base class: ``minimize``, ``apply_gradients``, ``iterations`` and per-variable state.

    A subclass names its slots in ``slot_names`` and implements ``_update``;
    ``_init_slots`` makes a new variable's slots (zeros by default).
    """

    slot_names: tuple[str, ...] = ()
    _hyper_parameters: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._iterations = 0
        self._state: dict[int, tuple[weakref.ref[Variable], list[Variable]]] = {}  # id(variable) -> (ref, slots)
        self._lock = threading.Lock()

    # -- the public API ---------------------------------------------------------

    @property
    def iterations(self) -> int:
        """How many times this optimizer has applied gradients."""
        return self._iterations

    def minimize(self, loss_fn: Callable[[], Tensor], var_list: Sequence[Variable] | None = None) -> Tensor:
        """Compute the scalar ``loss_fn()`` and its gradients, take one step downhill, and return the loss.

        The gradients are taken with respect to ``var_list`` (its trainable
        variables: others are left alone, as in TensorFlow.js), or to every
        trainable float variable when it is None.
        """
        variables = self._trainable(var_list)
        value, grads = variable_grads(loss_fn, variables)
        by_name = {v.name: v for v in variables}
        self._apply([(by_name[name], g) for name, g in grads.items()], value)
        return value

    def apply_gradients(self, grads: GradientMap) -> None:
        """Take one step with ``grads``: a gradient per variable, keyed by name (as ``tp.variable_grads`` gives) or
        by Variable. None gradients are skipped.

        Everything is checked before any variable changes: a bad entry raises and leaves all of them as they were.
        """
        if not isinstance(grads, Mapping):
            hint = " (pass the .grads of tp.variable_grads's result)" if isinstance(grads, tuple) else ""
            raise OptimizerError(
                f"{self._name}.apply_gradients(): grads must be a mapping from variable (or variable name) to "
                f"gradient, got a {type(grads).__name__}{hint}"
            )
        names = [key for key in grads if isinstance(key, str)]
        by_name = self._resolve_names(names, "apply_gradients") if names else {}
        pairs: list[tuple[Variable, Tensor]] = []
        seen: set[int] = set()
        for key, g in grads.items():
            variable = by_name[key] if isinstance(key, str) else key
            self._check_variable(variable, "apply_gradients")
            if id(variable) in seen:
                raise OptimizerError(
                    f"{self._name}.apply_gradients(): variable {variable.name!r} is given twice (by name and as a "
                    "Variable); give one gradient per variable"
                )
            seen.add(id(variable))
            if g is None:
                continue
            self._check_gradient(variable, g)
            pairs.append((variable, g))
        self._apply(pairs)

    def get_config(self) -> dict[str, Any]:
        """The hyper-parameters, by name (as TensorFlow.js's ``getConfig``)."""
        return {name: getattr(self, name) for name in self._hyper_parameters}

    def get_weights(self) -> list[tuple[str, Tensor]]:
        """The state as ``(name, tensor)`` pairs: ``("iter", int32 scalar)`` first, then each slot of each live
        variable, named ``"<variable name>/<slot>"``, slot by slot (the order TensorFlow.js uses)."""
        with self._lock:
            entries = [(ref(), slots) for ref, slots in list(self._state.values())]
        weights = [("iter", tensor(self._iterations, "int32"))]
        for i, slot in enumerate(self.slot_names):
            weights.extend((f"{v.name}/{slot}", tensor(slots[i])) for v, slots in entries if v is not None)
        return weights

    def set_weights(self, weights: Sequence[tuple[str, Tensor]], var_list: Sequence[Variable] | None = None) -> None:
        """Replace the state with what ``get_weights`` returned; variable names are looked up in ``var_list`` (the
        live variables by default). Every slot of a variable must be given; all is checked before anything changes.
        """
        where = "set_weights"
        weights = list(weights)
        if not weights or weights[0][0] != "iter":
            raise OptimizerError(
                f"{self._name}.{where}(): the first entry must be ('iter', iterations), as get_weights gives"
            )
        iterations = int(weights[0][1].item() if isinstance(weights[0][1], Tensor) else weights[0][1])
        if iterations < 0:
            raise OptimizerError(f"{self._name}.{where}(): iterations must be >= 0, got {iterations}")
        if var_list is None:
            by_name = self._resolve_names([name.rpartition("/")[0] for name, _ in weights[1:]], where)
        else:
            by_name = {v.name: v for v in var_list}
        state: dict[int, tuple[Variable, dict[str, Tensor]]] = {}
        for name, value in weights[1:]:
            variable_name, _, slot = name.rpartition("/")
            if slot not in self.slot_names or variable_name not in by_name:
                raise OptimizerError(
                    f"{self._name}.{where}(): no slot {name!r}: names are '<variable name>/<slot>' with slots "
                    f"{list(self.slot_names)} and a variable of {'var_list' if var_list is not None else 'that name'}"
                )
            variable = by_name[variable_name]
            self._check_gradient(variable, value, what=f"slot {slot!r}", where=where)
            state.setdefault(id(variable), (variable, {}))[1][slot] = value
        for variable, slots in state.values():
            missing = [s for s in self.slot_names if s not in slots]
            if missing:
                raise OptimizerError(f"{self._name}.{where}(): variable {variable.name!r} lacks slots {missing}")
        with self._lock:
            self._state.clear()
            for variable, slots in state.values():
                self._remember(variable, [slots[s] for s in self.slot_names])
            self._iterations = iterations

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={value!r}" for name, value in self.get_config().items())
        return f"{self._name}({args})"

    # -- what subclasses provide ------------------------------------------------

    def _update(self, updates: list[Update], step: int) -> None:
        """Assign each variable its new value and replace its slots; ``step`` counts from 1."""
        raise NotImplementedError

    def _init_slots(self, variable: Variable) -> list[Tensor]:
        """A new variable's slots: zeros of its shape and dtype (tensors are immutable, so one serves them all)."""
        zeros = zeros_like(variable)
        return [zeros] * len(self.slot_names)

    # -- the machinery ----------------------------------------------------------

    @property
    def _name(self) -> str:
        return type(self).__name__

    def _apply(self, pairs: list[tuple[Variable, Tensor]], loss: Tensor | None = None) -> None:
        """One step on checked (variable, gradient) pairs; if it raises, nothing has changed.

        The slots are Variables (so that a ``tp.function`` replay reads and updates them); ``_update`` gets
        them in a list and replaces entries with their new values, which are assigned here. On a lazy backend
        the new values (and ``loss``) are persisted together: the step's graph is computed once, not kept.
        """
        with self._lock, no_grad():
            step = self._iterations + 1
            tracer = state.tracer
            if tracer is not None:  # tp.function is tracing: each replay counts a step too (none if it fails)
                tracer.on_replay(self._count_step, self._uncount_step)
                structure = self._structure()
                if structure:  # a replay runs the kernels these choose: another choice traces again
                    tracer.guard(lambda: self._structure() == structure)
            fresh = [v for v, _ in pairs if self.slot_names and not self._has_slots(v)]
            slot_variables = [self._slots(v) for v, _ in pairs]
            saved = [(v, v._data) for v, _ in pairs] + [(s, s._data) for slots in slot_variables for s in slots]
            try:
                if not self.slot_names:
                    self._update([(v, g, []) for v, g in pairs], step)
                else:
                    updates: list[Update] = [(v, g, list(s)) for (v, g), s in zip(pairs, slot_variables, strict=True)]
                    self._update(updates, step)
                    for slots, (_, _, values) in zip(slot_variables, updates, strict=True):
                        for slot, value in zip(slots, values, strict=True):
                            if value is not slot:
                                slot.assign(value)
                lazy = [v for v, _ in pairs if v._backend.lazy]
                if lazy:
                    slots = [s for v in lazy for s in self._slots(v)]
                    persist_lazy([*lazy, *slots, *([loss] if loss is not None else [])])
            except BaseException:
                for variable, raw in saved:
                    if variable._data is not raw:
                        variable.assign(wrap_storage(raw, variable._backend, variable._dtype))
                for v in fresh:
                    self._state.pop(id(v), None)
                raise
            self._iterations = step

    def _count_step(self) -> None:
        with self._lock:
            self._iterations += 1

    def _uncount_step(self) -> None:
        with self._lock:
            self._iterations -= 1

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        """The hyper-parameters step ``step`` uses, in the order ``_update`` takes them (read at every step)."""
        return ()

    def _structure(self) -> tuple[Any, ...]:
        """The hyper-parameters that choose which kernels a step runs (not only their inputs)."""
        return ()

    def _scalars(
        self,
        by_dtype: dict[str, tuple[float | Tensor, ...]],
        dtype: str,
        step: int,
        compute: Callable[[int], tuple[float, ...]],
    ) -> tuple[float | Tensor, ...]:
        """``compute(step)``'s numbers for variables of ``dtype``, once per step and dtype (kept in ``by_dtype``)."""
        scalars = by_dtype.get(dtype)
        if scalars is None:
            scalars = by_dtype[dtype] = self._host_scalars(compute(step), compute, dtype)
        return scalars

    def _host_scalars(
        self, values: tuple[float, ...], compute: Callable[[int], tuple[float, ...]], dtype: str
    ) -> tuple[float | Tensor, ...]:
        """Per-step host numbers: as they are, or while ``tp.function`` traces, tensors a replay makes again
        from ``compute(iterations)`` (the step the replay takes), so that a hyper-parameter changed between
        calls is honoured."""
        tracer = state.tracer
        if tracer is None:
            return values
        return tuple(tracer.host_values(lambda: compute(self._iterations), values, dtype))

    def _has_slots(self, variable: Variable) -> bool:
        entry = self._state.get(id(variable))
        return entry is not None and entry[0]() is variable

    def _slots(self, variable: Variable) -> list[Variable]:
        """The variable's slots, made on its first update."""
        if not self.slot_names:
            return []
        entry = self._state.get(id(variable))
        if entry is not None and entry[0]() is variable:
            return entry[1]
        return self._remember(variable, self._init_slots(variable))

    def _remember(self, variable: Variable, slots: list[Tensor]) -> list[Variable]:
        """Keep ``slots``, as non-trainable Variables, for ``variable`` until it is collected (a weak reference:
        the state never keeps it alive).

        The key is the variable's id, not the variable: Tensor's ``==`` is elementwise, which rules out
        WeakKeyDictionary. The entry goes when the variable does, before its id can be reused.
        """
        key = id(variable)
        state = self._state

        def forget(ref: weakref.ref[Variable]) -> None:
            entry = state.get(key)
            if entry is not None and entry[0] is ref:
                del state[key]

        variables = [
            Variable(value, trainable=False, name=f"{variable.name}/{slot}")
            for value, slot in zip(slots, self.slot_names, strict=True)
        ]
        state[key] = (weakref.ref(variable, forget), variables)
        return variables

    def _trainable(self, var_list: Sequence[Variable] | None) -> list[Variable]:
        """What ``minimize`` differentiates: the trainable variables of ``var_list``, or every trainable float one."""
        if var_list is None:
            variables = [v for v in live_variables() if v.trainable and is_floating(v.dtype)]
            if not variables:
                raise OptimizerError(
                    f"{self._name}.minimize(): there is no trainable float variable to minimize over; make some with "
                    "tp.variable(...) or pass var_list"
                )
            return variables
        variables = []
        for v in var_list:
            if not isinstance(v, Variable):
                raise OptimizerError(
                    f"{self._name}.minimize(): var_list holds a {type(v).__name__}; it must hold Variables "
                    "(tp.variable(...))"
                )
            if v.trainable:
                variables.append(v)
        if not variables:
            raise OptimizerError(
                f"{self._name}.minimize(): none of the {len(var_list)} variables of var_list is trainable"
            )
        return variables

    def _resolve_names(self, names: list[str], where: str) -> dict[str, Variable]:
        """The live variable of each name (an error if a name is unknown or belongs to several variables)."""
        wanted = set(names)
        found: dict[str, list[Variable]] = {}
        for v in live_variables():
            if v.name in wanted:
                found.setdefault(v.name, []).append(v)
        for name in names:
            matches = found.get(name, [])
            if not matches:
                raise OptimizerError(
                    f"{self._name}.{where}(): no live variable is named {name!r}; key the gradients by names of "
                    "existing variables (as tp.variable_grads does) or by the Variables themselves"
                )
            if len(matches) > 1:
                raise OptimizerError(
                    f"{self._name}.{where}(): {len(matches)} live variables are named {name!r}; key the gradients "
                    "by the Variables themselves, or give the variables distinct names"
                )
        return {name: matches[0] for name, matches in found.items()}

    def _check_variable(self, variable: object, where: str) -> None:
        if not isinstance(variable, Variable):
            raise OptimizerError(
                f"{self._name}.{where}(): gradients are keyed by Variables or variable names, got a "
                f"{type(variable).__name__} ({describe(variable)})"
            )
        if not variable.trainable:
            raise OptimizerError(
                f"{self._name}.{where}(): variable {variable.name!r} ({describe(variable)}) is not trainable; "
                "leave it out, or make it with tp.variable(..., trainable=True)"
            )
        if not is_floating(variable.dtype):
            raise OptimizerError(
                f"{self._name}.{where}(): variable {variable.name!r} is {describe(variable)}; only float variables "
                "can be trained"
            )

    def _check_gradient(
        self, variable: Variable, g: object, what: str = "the gradient", where: str = "apply_gradients"
    ) -> None:
        if not isinstance(g, Tensor):
            raise OptimizerError(
                f"{self._name}.{where}(): {what} for variable {variable.name!r} ({describe(variable)}) is a "
                f"{type(g).__name__}, not a Tensor; convert it with tp.tensor(value, dtype={variable.dtype!r})"
            )
        if g.shape != variable.shape:
            raise ShapeError(
                f"{self._name}.{where}(): {what} for variable {variable.name!r} is {describe(g)}, but the variable "
                f"is {describe(variable)}; it must have the variable's shape"
            )
        if g.dtype != variable.dtype:
            raise DTypeError(
                f"{self._name}.{where}(): {what} for variable {variable.name!r} is {describe(g)}, but the variable "
                f"is {describe(variable)}; cast it with tp.cast(g, {variable.dtype!r})"
            )


# -- hyper-parameter checks --------------------------------------------------------


def _number(owner: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise OptimizerError(f"{owner}: {name} must be a finite number, got {value!r}")
    return float(value)


def _non_negative(owner: str, name: str, value: object) -> float:
    number = _number(owner, name, value)
    if number < 0:
        raise OptimizerError(f"{owner}: {name} must be >= 0, got {value!r}")
    return number


def _positive(owner: str, name: str, value: object) -> float:
    number = _number(owner, name, value)
    if number <= 0:
        raise OptimizerError(f"{owner}: {name} must be > 0, got {value!r}")
    return number


def _decay_rate(owner: str, name: str, value: object) -> float:
    number = _number(owner, name, value)
    if not 0 <= number < 1:
        raise OptimizerError(f"{owner}: {name} must be in [0, 1), got {value!r}")
    return number


def _flag(owner: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise OptimizerError(f"{owner}: {name} must be True or False, got {value!r}")
    return value


# -- the optimizers ------------------------------------------------------------------


class SGD(Optimizer):
    """Plain gradient descent: ``w -= learning_rate * g``.

    >>> import tensorplug as tp
    >>> w = tp.variable(1.0, name="sgd_doc_w")
    >>> tp.train.SGD(0.25).minimize(lambda: w * w, [w]).item(), w.item()
    (1.0, 0.5)
    """

    _hyper_parameters = ("learning_rate",)

    def __init__(self, learning_rate: float) -> None:
        super().__init__()
        self.learning_rate = _non_negative("SGD", "learning_rate", learning_rate)

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate,)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        for variable, g, _ in updates:
            (lr,) = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            variable.assign(sub(variable, mul(g, lr)))


class Momentum(Optimizer):
    """Gradient descent with momentum: ``a = momentum * a + g``, then ``w -= learning_rate * a`` (Nesterov:
    ``w -= learning_rate * (g + momentum * a)``).

    >>> import tensorplug as tp
    >>> tp.train.Momentum(0.1, 0.9)
    Momentum(learning_rate=0.1, momentum=0.9, use_nesterov=False)
    """

    slot_names = ("momentum",)
    _hyper_parameters = ("learning_rate", "momentum", "use_nesterov")

    def __init__(self, learning_rate: float, momentum: float, use_nesterov: bool = False) -> None:
        super().__init__()
        self.learning_rate = _non_negative("Momentum", "learning_rate", learning_rate)
        self.momentum = _non_negative("Momentum", "momentum", momentum)
        self.use_nesterov = _flag("Momentum", "use_nesterov", use_nesterov)

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate, self.momentum)

    def _structure(self) -> tuple[Any, ...]:
        return (self.use_nesterov,)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        (nesterov,) = self._structure()
        for variable, g, slots in updates:
            lr, m = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            accumulation = add(mul(slots[0], m), g)
            slots[0] = accumulation
            direction = add(g, mul(accumulation, m)) if nesterov else accumulation
            variable.assign(sub(variable, mul(direction, lr)))


class Adam(Optimizer):
    """Adam (Kingma and Ba): moving averages ``m`` of the gradient and ``v`` of its square, bias-corrected.

    ``m = beta1 * m + (1 - beta1) * g``, ``v = beta2 * v + (1 - beta2) * g**2``, then at step ``t``
    ``w -= learning_rate * m_hat / (sqrt(v_hat) + epsilon)`` with ``m_hat = m / (1 - beta1**t)`` and
    ``v_hat = v / (1 - beta2**t)``. The bias corrections are folded into two host scalars per step
    (``w -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon * sqrt(1 - beta2**t))``,
    the same quantity rearranged), so each variable costs no extra kernel for them.

    >>> import tensorplug as tp
    >>> w = tp.variable([1.0, -1.0], name="adam_doc_w")
    >>> _ = tp.train.Adam(0.1).minimize(lambda: tp.sum(w * w), [w])
    >>> [round(x, 4) for x in w.tolist()]
    [0.9, -0.9]
    """

    slot_names = ("m", "v")
    _hyper_parameters = ("learning_rate", "beta1", "beta2", "epsilon")

    def __init__(
        self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999, epsilon: float = FLOAT_EPSILON
    ) -> None:
        super().__init__()
        self.learning_rate = _non_negative("Adam", "learning_rate", learning_rate)
        self.beta1 = _decay_rate("Adam", "beta1", beta1)
        self.beta2 = _decay_rate("Adam", "beta2", beta2)
        self.epsilon = _non_negative("Adam", "epsilon", epsilon)

    def _corrections(self, step: int) -> tuple[float, float]:
        """The step size and epsilon of step ``step``, bias corrections folded in (host float64)."""
        root_correction2 = math.sqrt(1.0 - self.beta2**step)
        return self.learning_rate * root_correction2 / (1.0 - self.beta1**step), self.epsilon * root_correction2

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.beta1, 1.0 - self.beta1, self.beta2, 1.0 - self.beta2)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        by_step: dict[str, tuple[float | Tensor, ...]] = {}
        for variable, g, slots in updates:
            b1, rest1, b2, rest2 = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            step_size, epsilon = self._scalars(by_step, variable.dtype, step, self._corrections)
            m = add(mul(slots[0], b1), mul(g, rest1))
            v = add(mul(slots[1], b2), mul(square(g), rest2))
            slots[0], slots[1] = m, v
            variable.assign(sub(variable, mul(div(m, add(sqrt(v), epsilon)), step_size)))


class RMSProp(Optimizer):
    """RMSProp: divide the gradient by a moving root-mean-square of recent gradients, with optional momentum.

    ``ms = decay * ms + (1 - decay) * g**2``, ``mom = momentum * mom + learning_rate * g / sqrt(ms + epsilon)``,
    ``w -= mom``. Centered, the mean gradient ``mg`` is tracked too and ``ms - mg**2`` replaces ``ms``:
    ``sqrt(ms - mg**2 + epsilon)``, as TensorFlow has it (TensorFlow.js computes ``sqrt(ms - (mg**2 + epsilon))``,
    which is NaN wherever the gradient has been zero; that is the one place this class differs from it).

    >>> import tensorplug as tp
    >>> tp.train.RMSProp(0.01, centered=True)
    RMSProp(learning_rate=0.01, decay=0.9, momentum=0.0, epsilon=1e-07, centered=True)
    """

    _hyper_parameters = ("learning_rate", "decay", "momentum", "epsilon", "centered")

    def __init__(
        self,
        learning_rate: float,
        decay: float = 0.9,
        momentum: float = 0.0,
        epsilon: float = FLOAT_EPSILON,
        centered: bool = False,
    ) -> None:
        super().__init__()
        self.learning_rate = _non_negative("RMSProp", "learning_rate", learning_rate)
        self.decay = _decay_rate("RMSProp", "decay", decay)
        self.momentum = _non_negative("RMSProp", "momentum", momentum)
        self.epsilon = _non_negative("RMSProp", "epsilon", epsilon)
        self.centered = _flag("RMSProp", "centered", centered)
        self.slot_names = ("rms", "momentum", "mg") if centered else ("rms", "momentum")

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate, self.decay, 1.0 - self.decay, self.momentum, self.epsilon)

    def _structure(self) -> tuple[Any, ...]:
        return (self.centered, bool(self.momentum))

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        centered, with_momentum = self._structure()
        for variable, g, slots in updates:
            lr, rho, rest, momentum, epsilon = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            ms = add(mul(slots[0], rho), mul(square(g), rest))
            slots[0] = ms
            if centered:
                mg = add(mul(slots[2], rho), mul(g, rest))
                slots[2] = mg
                ms = sub(ms, square(mg))
            step_direction = div(mul(g, lr), sqrt(add(ms, epsilon)))
            if with_momentum:
                step_direction = add(mul(slots[1], momentum), step_direction)
            slots[1] = step_direction
            variable.assign(sub(variable, step_direction))


class Adagrad(Optimizer):
    """Adagrad: scale each coordinate's step by the root of its summed squared gradients.

    ``acc += g**2``, ``w -= learning_rate * g / sqrt(acc + 1e-7)``, the accumulator starting at
    ``initial_accumulator_value``.

    >>> import tensorplug as tp
    >>> tp.train.Adagrad(0.5)
    Adagrad(learning_rate=0.5, initial_accumulator_value=0.1)
    """

    slot_names = ("accumulator",)
    _hyper_parameters = ("learning_rate", "initial_accumulator_value")

    def __init__(self, learning_rate: float, initial_accumulator_value: float = 0.1) -> None:
        super().__init__()
        self.learning_rate = _non_negative("Adagrad", "learning_rate", learning_rate)
        self.initial_accumulator_value = _positive("Adagrad", "initial_accumulator_value", initial_accumulator_value)

    def _init_slots(self, variable: Variable) -> list[Tensor]:
        return [fill(variable.shape, self.initial_accumulator_value, variable.dtype)]

    def _hyper_values(self, step: int) -> tuple[float, ...]:
        return (self.learning_rate,)

    def _update(self, updates: list[Update], step: int) -> None:
        by_dtype: dict[str, tuple[float | Tensor, ...]] = {}
        for variable, g, slots in updates:
            (lr,) = self._scalars(by_dtype, variable.dtype, step, self._hyper_values)
            accumulator = add(slots[0], square(g))
            slots[0] = accumulator
            variable.assign(sub(variable, mul(div(g, sqrt(add(accumulator, FLOAT_EPSILON))), lr)))
