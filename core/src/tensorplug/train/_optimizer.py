"""The base class of the optimizers: ``minimize``, ``apply_gradients``, per-variable slots, and the
step machinery every optimizer shares (checks, all-or-nothing updates); the hyper-parameter checks.

The optimizers themselves are in :mod:`tensorplug.train._descent` and :mod:`tensorplug.train._adaptive`;
users reach all of them as ``tp.train``.
"""

from __future__ import annotations

import math
import numbers
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from tensorplug._autodiff._tape import variable_grads
from tensorplug._runtime._dtypes import is_floating
from tensorplug._runtime._errors import DTypeError, ShapeError
from tensorplug._runtime._lazy import persist_lazy
from tensorplug._runtime._state import no_grad, state
from tensorplug._runtime._tensor import Tensor, describe, wrap_storage
from tensorplug._runtime._variable import Variable, live_variables
from tensorplug.ops import tensor, zeros_like
from tensorplug.train._state import OptimizerError, OptimizerState, check_state, commit_state, snapshot

__all__ = ["FLOAT_EPSILON", "GradientMap", "Optimizer", "OptimizerError", "Update"]

FLOAT_EPSILON = 1e-7
"""TensorFlow.js's ``backend.epsilon()`` on float32: Adam's and RMSProp's default epsilon, Adagrad's fixed one."""

GradientMap = Mapping[str, Tensor | None] | Mapping[Variable, Tensor | None] | Mapping[str | Variable, Tensor | None]
"""What ``apply_gradients`` takes: a gradient per variable, keyed by variable name or by the Variable itself."""

Update = tuple[Variable, Tensor, list[Tensor]]
"""One variable's share of a step: the variable, its gradient, and its slots (replaced in the list by the update)."""


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

    def state(self) -> OptimizerState:
        """Everything this optimizer carries from step to step, as one value: its class name, ``iterations``, its
        hyper-parameters and each live variable's slots (see :class:`tensorplug.train.OptimizerState`).
        ``tp.save`` stores it with the model; ``load_state`` gives it back."""
        return snapshot(self)

    def load_state(self, state: OptimizerState) -> None:
        """Take ``state`` (from ``state()`` of an optimizer of the same class): its iterations, hyper-parameters
        and slots replace this optimizer's. Everything is checked first (class, hyper-parameters, each slot's
        shape and dtype against its variable's): a state that does not fit raises and changes nothing.

        A variable this optimizer has slots for, and the state has none for, starts again from fresh slots. The
        slot values go into the existing slot Variables, so a ``tp.function`` that traced a step goes on from
        the new state.
        """
        template = check_state(self, state)
        commit_state(self, state, template)

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
