"""Checkpoints: ``tp.save``, ``tp.load`` and ``tp.restore``, in the safetensors format (see docs/checkpoints.md).

A tree (dicts, lists and tuples of Tensors, Variables and optimizers) is flattened to dotted names: the path of
keys (and list indices) to each leaf, joined by dots. An optimizer at path ``p`` becomes ``p.iterations`` (an
int64 scalar), ``p.config.<hyper-parameter>`` (float64 scalars and bool flags) and ``p.slots.<variable path>.<slot>``
for each variable of the tree it has slots for. The file format and its integrity checks are in
:mod:`tensorplug.train._checkpoint_file`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import TensorplugError
from tensorplug._runtime._state import state as thread_state
from tensorplug._runtime._storage import spec_text
from tensorplug._runtime._tensor import Tensor, describe, wrap_storage
from tensorplug._runtime._variable import Variable
from tensorplug.ops import tensor
from tensorplug.train._checkpoint_file import (
    JSON_KEYS_KEY,
    OPTIMIZERS_KEY,
    RESERVED_PREFIX,
    CheckpointError,
    decode_json,
    encode,
    read_file,
    write_atomically,
)
from tensorplug.train._optimizer import Optimizer
from tensorplug.train._state import OptimizerState, check_state, commit_state

__all__ = ["Checkpoint", "CheckpointError", "Metadata", "Tree", "load", "restore", "save"]

Tree: TypeAlias = Mapping[str, Any] | Sequence[Any]
"""What ``save`` and ``restore`` take: a dict (str keys) or a list of Tensors, Variables, optimizers, and dicts,
lists and tuples of them (checked when called: a dict of mixed values is a ``dict[str, object]`` to a type checker)."""
Metadata: TypeAlias = Mapping[str, object]
"""A checkpoint's user metadata: a small dict of str, int, float, bool and None values (checked when called)."""

_MAX_LISTED = 20  # differences listed in one error message


class Checkpoint(dict[str, Tensor]):
    """What ``tp.load`` gives: the checkpoint's tensors by dotted name (in the order of the names), and

    - ``metadata``: the user metadata given to ``tp.save`` (values as they were given: strings, numbers, flags);
      for a safetensors file written by another program, its ``__metadata__`` strings;
    - ``verified``: True when the file's checksums were checked (a file tp.save wrote), False for a safetensors
      file without them (read as it is);
    - ``path``: where it was read from.
    """

    __module__ = "tensorplug"  # its public name, tp.Checkpoint

    metadata: dict[str, Any]
    verified: bool
    path: Path

    def __init__(self, tensors: dict[str, Tensor], metadata: dict[str, Any], verified: bool, path: Path) -> None:
        super().__init__(tensors)
        self.metadata = metadata
        self.verified = verified
        self.path = path

    def __repr__(self) -> str:
        names = list(self)
        shown = ", ".join(f"{name!r}: {describe(self[name])}" for name in names[:_MAX_LISTED])
        more = f", ... ({len(names) - _MAX_LISTED} more)" if len(names) > _MAX_LISTED else ""
        state = "verified" if self.verified else "unverified"
        return f"Checkpoint({str(self.path)!r}, {state}, {{{shown}{more}}}, metadata={self.metadata!r})"


# -- the public functions ---------------------------------------------------------------------------------------------


def save(path: str | os.PathLike[str], tree: Tree, *, metadata: Metadata | None = None) -> None:
    """Save ``tree`` to ``path`` (a safetensors file) so that a crash never leaves a damaged file there.

    ``tree`` is a dict (or a list) of Tensors, Variables, optimizers (``tp.train``: their iterations,
    hyper-parameters and slots) and nested dicts and lists of them; each tensor is named by its path of keys
    joined with dots (``{"model": {"w": w}}`` gives ``model.w``). ``metadata``: a small dict of strings,
    numbers, flags and None (an epoch, a note), kept in the file's ``__metadata__``.

    The file is written to a temporary file beside it, fsynced, then renamed over ``path``: until then ``path``
    holds the previous checkpoint, whole. Checksums of the header and the data go with it, checked by ``tp.load``.

    >>> import os, tempfile
    >>> import tensorplug as tp
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> w, b = tp.variable([[1.0, 2.0]], name="save_doc_w"), tp.variable([0.5], name="save_doc_b")
    >>> tp.save(path, {"layer": {"w": w, "b": b}}, metadata={"epoch": 3})
    >>> checkpoint = tp.load(path)
    >>> sorted(checkpoint), checkpoint["layer.w"].tolist(), checkpoint.metadata
    (['layer.b', 'layer.w'], [[1.0, 2.0]], {'epoch': 3})
    >>> import shutil; shutil.rmtree(os.path.dirname(path))
    """
    target = Path(path)
    where = f"tp.save({str(target)!r})"
    _refuse_while_tracing(where)
    leaves, optimizers = _flatten(tree, where)
    entries = _user_metadata(metadata, where)
    arrays: dict[str, np.ndarray] = {}
    sources: dict[str, str] = {}

    def put(name: str, value: np.ndarray, source: str) -> None:
        if name in arrays:
            raise CheckpointError(
                f"{where}: two entries of the tree are both named {name!r} ({sources[name]} and {source}); rename one "
                "of them (names are keys joined with dots)"
            )
        arrays[name] = value if value.flags.c_contiguous else value.copy(order="C")  # (ascontiguousarray: >= 1-d)
        sources[name] = source

    paths = {id(t): name for name, t in leaves if isinstance(t, Variable)}
    for name, t in leaves:
        put(name, t.numpy(), f"tree{_subscript(name)}")
    kinds = {}
    for prefix, optimizer in optimizers:
        kinds[prefix] = type(optimizer).__name__
        for name, value in _optimizer_entries(prefix, optimizer, paths, where):
            put(name, value, f"the state of optimizer {prefix!r}")
    if kinds:
        entries[OPTIMIZERS_KEY] = json.dumps(kinds, sort_keys=True)
    write_atomically(target, encode(arrays, entries), where)


def load(path: str | os.PathLike[str]) -> Checkpoint:
    """Read the checkpoint at ``path``: its tensors, by dotted name, on the active backend, and its metadata.

    Any safetensors file loads (one written by PyTorch or the Hugging Face tools too), if its dtypes are
    tensorplug's (float32, float64, int32, int64, bool). A file that ``tp.save`` wrote is checked against its
    checksums first: a damaged or truncated one raises a ``tp.CheckpointError`` naming the file and what is wrong,
    never gives a tensor that differs from what was saved. Other files carry no checksum: ``verified`` is False.
    """
    target = Path(path)
    where = f"tp.load({str(target)!r})"
    _refuse_while_tracing(where)
    contents = read_file(target, where)
    tensors = {name: tensor(contents.arrays[name]) for name in sorted(contents.arrays)}
    return Checkpoint(tensors, _decode_metadata(contents.metadata, where), contents.verified, target)


def restore(path: str | os.PathLike[str], tree: Tree, *, strict: bool = True) -> dict[str, Any]:
    """Put the checkpoint at ``path`` back into the Variables and optimizers of ``tree`` (named as ``tp.save``
    names them); return the checkpoint's user metadata.

    Everything is checked before anything changes: each Variable's entry must be there with its shape and dtype,
    each optimizer's state must be of its class and fit its variables; with ``strict`` (the default) the
    checkpoint may hold nothing the tree lacks. Otherwise a ``tp.CheckpointError`` lists every difference and no
    Variable or optimizer has changed. Each Variable keeps its backend (a checkpoint saved on one backend restores
    on another).
    """
    target = Path(path)
    where = f"tp.restore({str(target)!r})"
    _refuse_while_tracing(where)
    contents = read_file(target, where)
    arrays = contents.arrays
    leaves, optimizers = _flatten(tree, where)
    problems: list[str] = []
    used: set[str] = set()
    variables: dict[str, Variable] = {}
    for name, t in leaves:
        if not isinstance(t, Variable):
            problems.append(f"{name!r} is a Tensor in the tree, which cannot change: restore into Variables")
            continue
        variables[name] = t
        _check_entry(arrays, name, t.dtype, t.shape, "", problems, used)
    saved_kinds = _saved_optimizers(contents.metadata, where)
    states: list[tuple[Optimizer, OptimizerState, Optimizer]] = []
    for prefix, optimizer in optimizers:
        found = _optimizer_state(prefix, optimizer, saved_kinds, arrays, variables, problems, used, strict)
        if found is not None:
            states.append((optimizer, *found))
    unexpected = sorted(name for name in arrays if name not in used)
    if strict and unexpected:
        listed = ", ".join(repr(n) for n in unexpected[:_MAX_LISTED])
        more = f" and {len(unexpected) - _MAX_LISTED} more" if len(unexpected) > _MAX_LISTED else ""
        problems.append(f"the tree has no place for {listed}{more} (pass strict=False to leave them out)")
    if problems:
        shown = problems[:_MAX_LISTED]
        if len(problems) > _MAX_LISTED:
            shown.append(f"... and {len(problems) - _MAX_LISTED} more")
        raise CheckpointError(
            f"{where}: the checkpoint does not fit the tree, so nothing was restored:\n  - "
            + "\n  - ".join(shown)
            + "\ntp.load(path) lists what the checkpoint holds; restore into a tree of its names, shapes and dtypes"
        )
    values = {name: _on_backend_of(arrays[name], v) for name, v in variables.items()}
    _commit(variables, values, states)
    return _decode_metadata(contents.metadata, where)


# -- the tree ---------------------------------------------------------------------------------------------------------


def _flatten(tree: object, where: str) -> tuple[list[tuple[str, Tensor]], list[tuple[str, Optimizer]]]:
    """The tree's tensors and optimizers with their dotted names, in order; a clear error for anything else."""
    if not isinstance(tree, Mapping | list | tuple):
        raise CheckpointError(
            f"{where}: the tree must be a dict (or a list) of Tensors, Variables and optimizers, got a "
            f"{type(tree).__name__}; name it: {{'w': w}}"
        )
    leaves: list[tuple[str, Tensor]] = []
    optimizers: list[tuple[str, Optimizer]] = []
    seen: dict[int, str] = {}
    stack: list[tuple[str, object]] = [("", tree)]
    while stack:
        name, node = stack.pop()
        if isinstance(node, Tensor | Optimizer):
            if id(node) in seen:
                raise CheckpointError(
                    f"{where}: the same {type(node).__name__} is in the tree twice, at {seen[id(node)]!r} and "
                    f"{name!r}; keep one"
                )
            seen[id(node)] = name
            if isinstance(node, Tensor):
                leaves.append((name, node))
            else:
                optimizers.append((name, node))
            continue
        if isinstance(node, Mapping):
            children = []
            for key, value in node.items():
                if not isinstance(key, str) or not key or key.startswith("__"):
                    raise CheckpointError(
                        f"{where}: tree{_subscript(name)} has the key {key!r}; keys must be non-empty strings that "
                        "do not start with '__'"
                    )
                children.append((f"{name}.{key}" if name else key, value))
        elif isinstance(node, list | tuple):
            children = [(f"{name}.{i}" if name else str(i), value) for i, value in enumerate(node)]
        else:
            raise CheckpointError(
                f"{where}: tree{_subscript(name)} is a {type(node).__name__}; a checkpoint holds Tensors, Variables, "
                "optimizers (tp.train), and dicts, lists and tuples of them (put other values in metadata=)"
            )
        stack.extend(reversed(children))
    return leaves, optimizers


def _a(name: str) -> str:
    """``name`` with its indefinite article: "an Adam", "a Momentum"."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _subscript(name: str) -> str:
    """A dotted name as the subscripts that reach it: ``a.b`` -> ``['a']['b']``."""
    return "".join(f"[{part!r}]" for part in name.split(".")) if name else ""


def _refuse_while_tracing(where: str) -> None:
    if thread_state.tracer is not None:
        raise CheckpointError(
            f"{where}: called while tp.function traces; a replay would not read or write the file again. Save and "
            "load outside the traced function, between its calls"
        )


# -- optimizers -------------------------------------------------------------------------------------------------------


def _optimizer_entries(
    prefix: str, optimizer: Optimizer, paths: dict[int, str], where: str
) -> list[tuple[str, np.ndarray]]:
    """The named arrays of an optimizer's state: iterations, hyper-parameters, and slots by variable path."""
    state = optimizer.state()
    entries = [(f"{prefix}.iterations", np.array(state.iterations, dtype=np.int64))]
    for key, value in state.config.items():
        if isinstance(value, bool):
            entries.append((f"{prefix}.config.{key}", np.array(value, dtype=np.bool_)))
        elif isinstance(value, int | float):
            entries.append((f"{prefix}.config.{key}", np.array(value, dtype=np.float64)))
        else:
            raise CheckpointError(
                f"{where}: hyper-parameter {key!r} of optimizer {prefix!r} is a {type(value).__name__}; a checkpoint "
                "keeps numbers and flags"
            )
    for variable, slots in state.slots:
        path = paths.get(id(variable))
        if path is None:
            raise CheckpointError(
                f"{where}: optimizer {prefix!r} has slots for variable {variable.name!r} ({describe(variable)}), "
                "which is not in the tree: its slots are saved under its path in the tree, so add the variable "
                "(or leave the optimizer out)"
            )
        entries.extend((f"{prefix}.slots.{path}.{slot}", value.numpy()) for slot, value in slots.items())
    return entries


def _saved_optimizers(metadata: dict[str, str], where: str) -> dict[str, str]:
    text = metadata.get(OPTIMIZERS_KEY)
    if text is None:
        return {}
    kinds = _json_entry(text, OPTIMIZERS_KEY, where)  # verified with the header
    if not isinstance(kinds, dict):
        raise CheckpointError(f"{where}: the checkpoint's {OPTIMIZERS_KEY} entry is not a JSON object")
    return {str(k): str(v) for k, v in kinds.items()}


def _optimizer_state(
    prefix: str,
    optimizer: Optimizer,
    saved_kinds: dict[str, str],
    arrays: dict[str, np.ndarray],
    variables: dict[str, Variable],
    problems: list[str],
    used: set[str],
    strict: bool,
) -> tuple[OptimizerState, Optimizer] | None:
    """The state of the optimizer at ``prefix`` from the file, checked against it; None (and ``problems``) if it
    does not fit. Not ``strict``: the slots of variables the tree lacks are left out."""
    name = type(optimizer).__name__
    kind = saved_kinds.get(prefix)
    if kind is None:
        problems.append(f"{prefix!r}: the checkpoint holds no optimizer state there (the tree has {_a(name)})")
        return None
    before = len(problems)
    own = [key for key in arrays if key.startswith(f"{prefix}.") and key not in used]  # not a Variable's entry
    if kind != name:
        problems.append(f"{prefix!r}: the checkpoint holds {_a(kind)}'s state, the tree has {_a(name)}")
        used.update(own)  # explained by that: not listed one by one
        return None
    parts = ("iterations", "config.", "slots.")
    for key in own:
        if not key[len(prefix) + 1 :].startswith(parts):
            used.add(key)
            problems.append(f"{key!r}: not part of an optimizer's state (iterations, config.*, slots.*)")
    _check_entry(arrays, f"{prefix}.iterations", "int64", (), "", problems, used)
    config: dict[str, float | bool] = {}
    for key, value in optimizer.get_config().items():
        entry = f"{prefix}.config.{key}"
        dtype = "bool" if isinstance(value, bool) else "float64"
        if _check_entry(arrays, entry, dtype, (), "", problems, used):
            config[key] = bool(arrays[entry]) if dtype == "bool" else float(arrays[entry])
    extra = [k for k in own if k.startswith(f"{prefix}.config.") and k not in used]
    used.update(extra)
    problems.extend(f"{k!r}: {name} has no hyper-parameter of that name" for k in extra)
    if len(problems) > before:
        return None
    iterations = int(arrays[f"{prefix}.iterations"])
    by_variable: dict[str, dict[str, Tensor]] = {}
    slot_names: tuple[str, ...] = ()
    try:
        slot_names = check_state(optimizer, OptimizerState(name, iterations, config, ())).slot_names
    except TensorplugError as exc:  # an OptimizerError, a ShapeError...
        problems.append(f"{prefix!r}: {exc}")
        return None
    slots_prefix = f"{prefix}.slots."
    for key in (k for k in own if k.startswith(slots_prefix)):
        path, _, slot = key[len(slots_prefix) :].rpartition(".")
        variable = variables.get(path)
        if slot in slot_names and variable is None and not strict:
            continue  # a variable the tree lacks: left out, as its own entry is
        if slot not in slot_names or variable is None:
            used.add(key)
            problems.append(
                f"{key!r}: {name} has slots {list(slot_names)} for the tree's Variables, and this is none of them"
            )
            continue
        if _check_entry(arrays, key, variable.dtype, variable.shape, f" (a slot of {path!r})", problems, used):
            by_variable.setdefault(path, {})[slot] = _on_backend_of(arrays[key], variable)
    for path, slots in by_variable.items():
        missing = [s for s in slot_names if s not in slots]
        if missing:
            problems.append(f"{prefix!r}: variable {path!r} has slots {sorted(slots)} but lacks {missing}")
    if len(problems) > before:
        return None
    state = OptimizerState(name, iterations, config, tuple((variables[p], s) for p, s in by_variable.items()))
    try:
        return state, check_state(optimizer, state)
    except TensorplugError as exc:  # an OptimizerError, a ShapeError...
        problems.append(f"{prefix!r}: {exc}")
        return None


# -- restoring --------------------------------------------------------------------------------------------------------


def _check_entry(
    arrays: dict[str, np.ndarray],
    name: str,
    dtype: str,
    shape: tuple[int, ...],
    what: str,
    problems: list[str],
    used: set[str],
) -> bool:
    """Whether ``arrays[name]`` exists with ``dtype`` and ``shape``; if not, say so in ``problems``."""
    used.add(name)
    array = arrays.get(name)
    if array is None:
        problems.append(f"{name!r}{what} is missing from the checkpoint (the tree has {spec_text(dtype, shape)})")
        return False
    if array.dtype.name != dtype or array.shape != tuple(shape):
        differs = "dtype" if array.dtype.name != dtype else "shape"
        problems.append(
            f"{name!r}{what}: {differs} differs: {spec_text(array.dtype.name, array.shape)} in the checkpoint, "
            f"{spec_text(dtype, shape)} in the tree"
        )
        return False
    return True


def _on_backend_of(array: np.ndarray, variable: Variable) -> Tensor:
    """``array`` as a Tensor on the backend ``variable`` lives on (not necessarily the active one)."""
    value = tensor(array)
    if value._backend is not variable._backend:
        engine.move(value, variable._backend)
    return value


def _commit(
    variables: dict[str, Variable], values: dict[str, Tensor], states: list[tuple[Optimizer, OptimizerState, Optimizer]]
) -> None:
    """Assign every Variable and give every optimizer its state; if anything raises, put everything back."""
    old_values = [(v, v._data, v._backend) for v in variables.values()]
    old_states = [(optimizer, optimizer.state()) for optimizer, _, _ in states]
    try:
        for name, variable in variables.items():
            variable.assign(values[name])
        for optimizer, state, template in states:
            commit_state(optimizer, state, template)
    except BaseException:
        for variable, raw, backend in old_values:
            if variable._data is not raw:
                variable.assign(wrap_storage(raw, backend, variable.dtype))
        for optimizer, state in old_states:
            commit_state(optimizer, state, check_state(optimizer, state))
        raise


# -- metadata ---------------------------------------------------------------------------------------------------------


def _user_metadata(metadata: Metadata | None, where: str) -> dict[str, str]:
    """The user's metadata as safetensors' strings: strings as they are, other values as JSON (listed)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise CheckpointError(f"{where}: metadata must be a dict of str to str, int, float, bool or None")
    entries: dict[str, str] = {}
    as_json: list[str] = []
    for key, value in metadata.items():
        if not isinstance(key, str) or key.startswith(RESERVED_PREFIX):
            raise CheckpointError(
                f"{where}: metadata key {key!r} is refused: keys are strings, and those starting with "
                f"{RESERVED_PREFIX!r} are tensorplug's own"
            )
        if isinstance(value, str):
            entries[key] = value
        elif value is None or isinstance(value, bool | int | float):
            entries[key] = json.dumps(value)
            as_json.append(key)
        else:
            raise CheckpointError(
                f"{where}: metadata[{key!r}] is a {type(value).__name__}; metadata values are str, int, float, bool "
                "or None (store structured data as a JSON string, or as tensors in the tree)"
            )
    if as_json:
        entries[JSON_KEYS_KEY] = json.dumps(as_json)
    return entries


def _decode_metadata(entries: dict[str, str], where: str) -> dict[str, Any]:
    """The user's metadata back from the file's strings (verified with the header, when the file has checksums)."""
    keys = _json_entry(entries[JSON_KEYS_KEY], JSON_KEYS_KEY, where) if JSON_KEYS_KEY in entries else []
    if not isinstance(keys, list) or not all(isinstance(key, str) for key in keys):
        raise CheckpointError(f"{where}: the checkpoint's {JSON_KEYS_KEY} entry is not a JSON list of names")
    as_json = set(keys)
    return {
        key: _json_entry(value, key, where) if key in as_json else value
        for key, value in entries.items()
        if not key.startswith(RESERVED_PREFIX)
    }


def _json_entry(text: str, key: str, where: str) -> Any:
    """The value of metadata entry ``key``, stored as JSON; a CheckpointError naming the file if it is not."""
    try:
        return decode_json(text)
    except ValueError as exc:
        raise CheckpointError(
            f"{where}: the checkpoint's metadata entry {key!r} is damaged ({exc}); load an earlier checkpoint, or "
            "save again"
        ) from None
