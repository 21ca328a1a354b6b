"""An optimizer's state as one value, to save and give back: ``Optimizer.state()`` and ``Optimizer.load_state()``.

Checkpoints (``tp.save`` / ``tp.restore``) are built on these; they can also copy one optimizer's state to another.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from tensorplug._runtime._errors import TensorplugError
from tensorplug._runtime._tensor import Tensor, describe
from tensorplug._runtime._variable import Variable
from tensorplug.ops import tensor

__all__ = ["OptimizerError", "OptimizerState", "check_state", "commit_state", "snapshot"]


class OptimizerError(TensorplugError, ValueError):
    """An optimizer got a bad hyper-parameter, or gradients it cannot apply."""


class Stateful(Protocol):
    """What this module reads of an optimizer (``tensorplug.train.Optimizer`` is one)."""

    slot_names: tuple[str, ...]
    _hyper_parameters: ClassVar[tuple[str, ...]]
    _iterations: int
    _state: dict[int, tuple[weakref.ref[Variable], list[Variable]]]
    _lock: threading.Lock

    def __init__(self, **config: Any) -> None: ...

    def get_config(self) -> dict[str, Any]: ...

    def _init_slots(self, variable: Variable) -> list[Tensor]: ...

    def _remember(self, variable: Variable, slots: list[Tensor]) -> list[Variable]: ...

    def _check_gradient(self, variable: Variable, g: object, what: str = ..., where: str = ...) -> None: ...


Opt = TypeVar("Opt", bound=Stateful)


@dataclass(frozen=True)
class OptimizerState:
    """What an optimizer carries from one step to the next.

    ``kind``: the optimizer's class name (``"Adam"``); ``iterations``: the steps it has taken; ``config``: its
    hyper-parameters by name (``get_config()``: numbers and flags); ``slots``: for each live variable it has
    stepped, the variable and its slots by name (``slot_names``: Adam's ``"m"`` and ``"v"``), tensors of the
    variable's shape and dtype.

    >>> import tensorplug as tp
    >>> w = tp.variable([1.0, 2.0], name="state_doc_w")
    >>> opt = tp.train.Momentum(0.1, 0.9)
    >>> _ = opt.minimize(lambda: tp.sum(w * w), [w])
    >>> state = opt.state()
    >>> state.kind, state.iterations, state.config
    ('Momentum', 1, {'learning_rate': 0.1, 'momentum': 0.9, 'use_nesterov': False})
    >>> [(v.name, {k: t.tolist() for k, t in slots.items()}) for v, slots in state.slots]
    [('state_doc_w', {'momentum': [2.0, 4.0]})]
    >>> other = tp.train.Momentum(0.5, 0.5)
    >>> other.load_state(state)
    >>> other.iterations, other.learning_rate
    (1, 0.1)
    """

    kind: str
    iterations: int
    config: Mapping[str, float | bool]
    slots: tuple[tuple[Variable, Mapping[str, Tensor]], ...]


def snapshot(optimizer: Stateful) -> OptimizerState:
    """The optimizer's state now (its slots as tensors sharing the slot variables' current storage)."""
    with optimizer._lock:
        entries = [(ref(), slots) for ref, slots in list(optimizer._state.values())]
        iterations = optimizer._iterations
        names = optimizer.slot_names
    slots = tuple(
        (variable, {name: tensor(slot) for name, slot in zip(names, slot_variables, strict=True)})
        for variable, slot_variables in entries
        if variable is not None
    )
    return OptimizerState(type(optimizer).__name__, iterations, optimizer.get_config(), slots)


def check_state(optimizer: Opt, state: object) -> Opt:
    """Check that ``state`` fits ``optimizer`` (raise OptimizerError saying what does not); return a new optimizer
    of the same class made from the state's hyper-parameters (checked as the constructor checks them)."""
    name = type(optimizer).__name__
    where = f"{name}.load_state()"
    if not isinstance(state, OptimizerState):
        raise OptimizerError(
            f"{where}: the state must be a tp.train.OptimizerState (from .state()), got a {type(state).__name__}"
        )
    if state.kind != name:
        raise OptimizerError(f"{where}: the state is a {state.kind}'s, but this optimizer is a {name}")
    iterations = state.iterations
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 0:
        raise OptimizerError(f"{where}: iterations must be an int >= 0, got {iterations!r}")
    expected = list(optimizer.get_config())
    given = list(state.config)
    if sorted(expected) != sorted(given):
        missing = [k for k in expected if k not in state.config]
        unknown = [k for k in given if k not in expected]
        raise OptimizerError(
            f"{where}: the hyper-parameters of a {name} are {expected}; the state lacks {missing} and has unknown "
            f"{unknown}"
        )
    for key, value in state.config.items():
        if not isinstance(value, bool | int | float):
            raise OptimizerError(f"{where}: hyper-parameter {key!r} is a {type(value).__name__}, not a number or flag")
    try:
        template = type(optimizer)(**state.config)
    except OptimizerError as exc:
        raise OptimizerError(f"{where}: the state's hyper-parameters are refused: {exc}") from None
    except TypeError as exc:
        raise OptimizerError(
            f"{where}: {name}(**config) cannot be called with the state's hyper-parameters ({exc}); an optimizer "
            "class that gives and takes state must accept get_config()'s names in its constructor"
        ) from None
    seen: set[int] = set()
    for variable, slots in state.slots:
        if not isinstance(variable, Variable):
            raise OptimizerError(f"{where}: slots are keyed by Variables, got a {type(variable).__name__}")
        if id(variable) in seen:
            raise OptimizerError(f"{where}: variable {variable.name!r} ({describe(variable)}) has slots twice")
        seen.add(id(variable))
        missing = [s for s in template.slot_names if s not in slots]
        unknown = [s for s in slots if s not in template.slot_names]
        if missing or unknown:
            raise OptimizerError(
                f"{where}: variable {variable.name!r} needs slots {list(template.slot_names)}; the state lacks "
                f"{missing} and has unknown {unknown}"
            )
        for slot, slot_value in slots.items():
            optimizer._check_gradient(variable, slot_value, what=f"slot {slot!r}", where="load_state")
    return template


def commit_state(optimizer: Stateful, state: OptimizerState, template: Stateful) -> None:
    """Give ``optimizer`` the checked ``state`` (``template``: what ``check_state`` returned).

    A variable keeps its slot Variables, given the new values, so that a ``tp.function`` that traced a step
    (and reads those Variables at each replay) goes on with the new state. A variable with slots now and none in
    ``state`` gets its initial slots again, as a variable that was never stepped.
    """
    with optimizer._lock:
        for name in optimizer._hyper_parameters:
            setattr(optimizer, name, getattr(template, name))
        if optimizer.slot_names != template.slot_names:  # RMSProp's depend on ``centered``
            optimizer.slot_names = template.slot_names
        names = optimizer.slot_names
        given = {id(variable): (variable, slots) for variable, slots in state.slots}
        for key, (ref, slot_variables) in list(optimizer._state.items()):
            variable = ref()
            if variable is None or key in given:
                continue
            if len(slot_variables) == len(names):
                for slot, value in zip(slot_variables, optimizer._init_slots(variable), strict=True):
                    slot.assign(value)
            else:
                del optimizer._state[key]
        for variable, slots in given.values():
            values = [slots[name] for name in names]
            entry = optimizer._state.get(id(variable))
            if entry is not None and entry[0]() is variable and len(entry[1]) == len(values):
                for slot, value in zip(entry[1], values, strict=True):
                    slot.assign(value)
            else:
                optimizer._remember(variable, values)
        optimizer._iterations = state.iterations
