"""Checkpoints: tp.save / tp.load / tp.restore (names, dtypes, metadata, optimizers, all-or-nothing restores)
and Optimizer.state() / load_state(). The file's integrity and crash safety are in test_checkpoint_integrity.py,
resuming training in a fresh process in test_checkpoint_resume.py."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import safetensors.numpy

import tensorplug as tp
from tensorplug.train import OptimizerState

OPTIMIZERS: dict[str, Callable[[], tp.train.Optimizer]] = {
    "SGD": lambda: tp.train.SGD(0.1),
    "Momentum": lambda: tp.train.Momentum(0.1, 0.9, use_nesterov=True),
    "Adam": lambda: tp.train.Adam(0.01, beta1=0.8),
    "RMSProp": lambda: tp.train.RMSProp(0.01, momentum=0.5),
    "RMSProp-centered": lambda: tp.train.RMSProp(0.01, centered=True),
    "Adagrad": lambda: tp.train.Adagrad(0.1, initial_accumulator_value=0.5),
}


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "ckpt.safetensors"


def trained(kind: str, steps: int = 2) -> tuple[dict[str, tp.Variable], tp.train.Optimizer]:
    w = tp.variable([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], name="w")
    b = tp.variable([0.1, -0.1, 0.2], name="b")
    optimizer = OPTIMIZERS[kind]()
    for _ in range(steps):
        optimizer.minimize(lambda: tp.sum(tp.square(tp.ones((1, 2)) @ w + b)), [w, b])
    return {"w": w, "b": b}, optimizer


# -- names, values, dtypes, metadata --------------------------------------------------------------------------------


def test_names_are_the_paths_of_keys_and_safetensors_reads_them(path: Path) -> None:
    w = tp.variable([[1.0, 2.0], [3.0, 4.0]])
    tree = {"encoder": {"w": w, "layers": [tp.tensor([1, 2], "int64"), tp.tensor(True)]}, "step": tp.tensor(7)}
    tp.save(path, tree)
    arrays = safetensors.numpy.load_file(path)
    assert sorted(arrays) == ["encoder.layers.0", "encoder.layers.1", "encoder.w", "step"]
    assert arrays["encoder.w"].dtype == np.float32
    assert arrays["encoder.w"].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert arrays["encoder.layers.0"].dtype == np.int64
    assert arrays["encoder.layers.1"].shape == ()
    assert arrays["step"].dtype == np.int32
    checkpoint = tp.load(path)
    assert list(checkpoint) == sorted(arrays)
    assert checkpoint.verified
    for name, array in arrays.items():
        assert isinstance(checkpoint[name], tp.Tensor)
        assert not isinstance(checkpoint[name], tp.Variable)
        assert checkpoint[name].backend == "numpy"
        assert checkpoint[name].dtype == array.dtype.name
        np.testing.assert_array_equal(checkpoint[name].numpy(), array)


@pytest.mark.parametrize("dtype", tp.DTYPES)
def test_every_dtype_round_trips_bit_for_bit(path: Path, dtype: str) -> None:
    rng = np.random.default_rng(0)
    if dtype == "bool":
        values = rng.random((3, 4)) > 0.5
    elif dtype.startswith("int"):
        info = np.iinfo(dtype)
        values = np.array([[info.min, -1, 0, info.max]] * 3, dtype=dtype)
    else:
        values = rng.standard_normal((3, 4)).astype(dtype)
        values[0, :3] = [np.nan, -np.inf, -0.0]
    tp.save(path, {"x": tp.tensor(values), "scalar": tp.tensor(values[1, 1]), "empty": tp.tensor(values[:0])})
    checkpoint = tp.load(path)
    for name, expected in {"x": values, "scalar": values[1, 1], "empty": values[:0]}.items():
        got = checkpoint[name].numpy()
        assert got.dtype == np.dtype(dtype)
        assert got.shape == np.shape(expected)
        assert got.tobytes() == np.asarray(expected).tobytes()  # bits: NaN, -0.0 and all


def test_every_tensorplug_dtype_has_a_safetensors_name() -> None:
    from tensorplug.train._checkpoint_file import SAFETENSORS_DTYPES

    assert sorted(SAFETENSORS_DTYPES) == sorted(tp.DTYPES)
    assert sorted(SAFETENSORS_DTYPES.values()) == ["BOOL", "F32", "F64", "I32", "I64"]


def test_metadata_round_trips_with_its_types_and_is_plain_safetensors_metadata(path: Path) -> None:
    metadata = {"epoch": 3, "loss": 0.125, "note": "after warm-up", "done": False, "best": None, "format": "pt"}
    tp.save(path, {"w": tp.ones(2)}, metadata=metadata)
    assert tp.load(path).metadata == metadata
    with safetensors.safe_open(path, framework="np") as f:
        stored = f.metadata()
    assert {k: stored[k] for k in metadata} == {
        "epoch": "3",
        "loss": "0.125",
        "note": "after warm-up",
        "done": "false",
        "best": "null",
        "format": "pt",
    }
    assert stored["tensorplug.format"] == "1"
    assert len(stored["tensorplug.data_sha256"]) == len(stored["tensorplug.header_sha256"]) == 64


@pytest.mark.parametrize(
    ("metadata", "pattern"),
    [
        ({"tensorplug.x": "1"}, r"metadata key 'tensorplug.x' is refused"),
        ({1: "x"}, r"metadata key 1 is refused: keys are strings"),
        ({"losses": [1.0, 2.0]}, r"metadata\['losses'\] is a list; metadata values are str, int, float, bool or None"),
        ("epoch=3", r"metadata must be a dict"),
    ],
)
def test_bad_metadata_is_refused_before_anything_is_written(path: Path, metadata: object, pattern: str) -> None:
    with pytest.raises(tp.CheckpointError, match=rf"^tp.save\('.*ckpt.safetensors'\): {pattern}"):
        tp.save(path, {"w": tp.ones(2)}, metadata=metadata)  # type: ignore[arg-type]
    assert os.listdir(path.parent) == []


@pytest.mark.parametrize(
    ("tree", "pattern"),
    [
        (tp.ones(2), r"the tree must be a dict \(or a list\).*got a Tensor"),
        ({"a": {"b": 3.0}}, r"tree\['a'\]\['b'\] is a float; a checkpoint holds Tensors, Variables, optimizers"),
        ({"a": np.ones(2)}, r"tree\['a'\] is a ndarray"),
        ({"": tp.ones(2)}, r"has the key ''; keys must be non-empty strings"),
        ({"__metadata__": tp.ones(2)}, r"has the key '__metadata__'"),
        ({"a": {1: tp.ones(2)}}, r"tree\['a'\] has the key 1"),
        ({"a.b": tp.ones(2), "a": {"b": tp.ones(3)}}, r"two entries of the tree are both named 'a.b'"),
    ],
)
def test_bad_trees_are_refused_before_anything_is_written(path: Path, tree: object, pattern: str) -> None:
    with pytest.raises(tp.CheckpointError, match=pattern):
        tp.save(path, tree)  # type: ignore[arg-type]
    assert os.listdir(path.parent) == []


def test_the_same_variable_twice_is_refused(path: Path) -> None:
    w = tp.variable([1.0])
    with pytest.raises(tp.CheckpointError, match=r"the same Variable is in the tree twice, at 'a' and 'b.0'"):
        tp.save(path, {"a": w, "b": [w]})


def test_save_replaces_the_old_file_keeps_its_permissions_and_leaves_no_temporary_file(path: Path) -> None:
    tp.save(path, {"w": tp.ones(2)}, metadata={"v": 1})
    path.chmod(0o600)
    tp.save(path, {"w": tp.zeros(3)}, metadata={"v": 2})
    assert tp.load(path)["w"].tolist() == [0.0, 0.0, 0.0]
    assert tp.load(path).metadata == {"v": 2}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert os.listdir(path.parent) == [path.name]


def test_save_through_a_symlink_writes_the_file_it_points_to(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "ckpt.safetensors"
    tp.save(real, {"w": tp.ones(1)})
    link = tmp_path / "latest.safetensors"
    link.symlink_to(real)
    tp.save(link, {"w": tp.zeros(1)})
    assert link.is_symlink()
    assert tp.load(real)["w"].tolist() == [0.0]


def test_save_into_a_missing_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"the folder '.*nowhere' does not exist; create it first"):
        tp.save(tmp_path / "nowhere" / "ckpt.safetensors", {"w": tp.ones(1)})


def test_a_failing_write_leaves_the_old_file_and_no_temporary_file(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tp.save(path, {"w": tp.ones(2)})

    def full_disk(fd: int, data: object) -> int:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError, match="No space left") as caught:
        tp.save(path, {"w": tp.zeros(2)})
    assert any("the file is unchanged" in note for note in caught.value.__notes__)
    monkeypatch.undo()
    assert tp.load(path)["w"].tolist() == [1.0, 1.0]
    assert os.listdir(path.parent) == [path.name]


def test_a_plain_safetensors_file_loads_unverified(path: Path) -> None:
    safetensors.numpy.save_file(
        {"weight": np.arange(6, dtype=np.float32).reshape(2, 3), "ids": np.array([1, 2], dtype=np.int64)},
        path,
        metadata={"format": "pt"},
    )
    checkpoint = tp.load(path)
    assert not checkpoint.verified
    assert checkpoint.metadata == {"format": "pt"}
    assert checkpoint["weight"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert checkpoint["ids"].dtype == "int64"
    w = tp.variable(tp.zeros((2, 3)))
    ids = tp.variable(tp.zeros(2, "int64"))
    tp.restore(path, {"weight": w, "ids": ids})
    assert w.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert "unverified" in repr(checkpoint)


@pytest.mark.parametrize(("dtype", "code"), [("float16", "F16"), ("uint8", "U8"), ("int8", "I8"), ("uint64", "U64")])
def test_a_dtype_tensorplug_lacks_is_refused_by_name(path: Path, dtype: str, code: str) -> None:
    safetensors.numpy.save_file({"ok": np.ones(2, np.float32), "half": np.ones(2, dtype)}, path)
    with pytest.raises(tp.CheckpointError, match=rf"holds tensor 'half' of dtype {code} \({dtype}\), which tensorplug"):
        tp.load(path)


def test_load_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nothing\.safetensors"):
        tp.load(tmp_path / "nothing.safetensors")


def test_checkpoint_repr_lists_names_shapes_and_dtypes(path: Path) -> None:
    tp.save(path, {"w": tp.ones((2, 3)), "n": tp.tensor(1, "int64")}, metadata={"epoch": 1})
    text = repr(tp.load(path))
    assert text.startswith(f"Checkpoint({str(path)!r}, verified, {{'n': int64[], 'w': float32[2, 3]}}")
    assert text.endswith("metadata={'epoch': 1})")


def test_save_load_and_restore_refuse_to_run_while_tracing(path: Path) -> None:
    w = tp.variable([1.0])
    tp.save(path, {"w": w})
    for call in (lambda: tp.save(path, {"w": w}), lambda: tp.load(path), lambda: tp.restore(path, {"w": w})):
        traced = tp.function(lambda x, call=call: (call(), x)[1])
        with pytest.raises(tp.CheckpointError, match=r"called while tp\.function traces"):
            traced(tp.ones(1))


def test_import_tensorplug_does_not_import_safetensors_and_save_does() -> None:
    code = (
        "import sys, tempfile, os\n"
        "import tensorplug as tp\n"
        "before = 'safetensors' in sys.modules\n"
        "tp.save, tp.load, tp.CheckpointError  # the names load nothing heavy either\n"
        "names = 'safetensors' in sys.modules\n"
        "tp.save(os.path.join(tempfile.mkdtemp(), 'c.safetensors'), {'w': tp.ones(1)})\n"
        "print(before, names, 'safetensors' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True"]


# -- restore --------------------------------------------------------------------------------------------------------


def test_restore_puts_values_and_optimizer_state_back(path: Path) -> None:
    variables, optimizer = trained("Adam")
    tp.save(path, {"model": variables, "optimizer": optimizer}, metadata={"epoch": 2})
    fresh = {"w": tp.variable(tp.zeros((2, 3))), "b": tp.variable(tp.zeros(3))}
    other = tp.train.Adam(0.5)
    metadata = tp.restore(path, {"model": fresh, "optimizer": other})
    assert metadata == {"epoch": 2}
    for name in variables:
        assert fresh[name].numpy().tobytes() == variables[name].numpy().tobytes()
    assert other.iterations == 2
    assert other.get_config() == optimizer.get_config()
    saved, restored = optimizer.state(), other.state()
    assert len(restored.slots) == 2

    def by_name(state: OptimizerState, tree: dict[str, tp.Variable]) -> dict[str, dict[str, bytes]]:
        names = {id(v): name for name, v in tree.items()}
        return {names[id(v)]: {k: t.numpy().tobytes() for k, t in slots.items()} for v, slots in state.slots}

    assert by_name(restored, fresh) == by_name(saved, variables)
    assert sorted(by_name(restored, fresh)) == ["b", "w"]


def test_a_restore_that_does_not_fit_lists_every_difference_and_changes_nothing(path: Path) -> None:
    variables, optimizer = trained("Adam")
    extra = tp.tensor([1, 2, 3])
    tp.save(path, {"model": {**variables, "extra": extra}, "optimizer": optimizer})
    w = tp.variable(tp.zeros((3, 2)))
    b = tp.variable(tp.zeros(3, "float64"))
    c = tp.variable(tp.zeros(2))
    momentum = tp.train.Momentum(0.1, 0.9)
    before = [w.numpy().copy(), b.numpy().copy(), c.numpy().copy()]
    with pytest.raises(tp.CheckpointError) as caught:
        tp.restore(path, {"model": {"w": w, "b": b, "c": c}, "optimizer": momentum})
    message = str(caught.value)
    assert message.startswith(f"tp.restore({str(path)!r}): the checkpoint does not fit the tree, so nothing was")
    assert "'model.w': shape differs: float32[2, 3] in the checkpoint, float32[3, 2] in the tree" in message
    assert "'model.b': dtype differs: float32[3] in the checkpoint, float64[3] in the tree" in message
    assert "'model.c' is missing from the checkpoint (the tree has float32[2])" in message
    assert "'optimizer': the checkpoint holds an Adam's state, the tree has a Momentum" in message
    assert "the tree has no place for 'model.extra' (pass strict=False to leave them out)" in message
    for variable, old in zip([w, b, c], before, strict=True):
        assert np.array_equal(variable.numpy(), old)
    assert momentum.iterations == 0
    assert momentum.state().slots == ()


def test_restore_checks_slots_against_their_variables_and_changes_nothing(path: Path) -> None:
    variables, optimizer = trained("Momentum")
    tp.save(path, {"model": variables, "optimizer": optimizer})
    w = tp.variable(tp.zeros((2, 3)))
    b = tp.variable(tp.zeros(3))
    target = tp.train.Momentum(0.1, 0.9, use_nesterov=True)
    target.minimize(lambda: tp.sum(w * w) + tp.sum(b), [w, b])
    state_before = target.state()
    w_before = w.numpy().copy()
    with pytest.raises(tp.CheckpointError, match=r"'model.x' is missing from the checkpoint") as caught:
        tp.restore(path, {"model": {"w": w, "b": b, "x": tp.variable(1.0)}, "optimizer": target})
    assert "nothing was restored" in str(caught.value)
    assert np.array_equal(w.numpy(), w_before)
    assert target.iterations == 1
    assert [t.numpy().tobytes() for _, s in target.state().slots for t in s.values()] == [
        t.numpy().tobytes() for _, s in state_before.slots for t in s.values()
    ]


def test_restore_into_a_tensor_is_refused(path: Path) -> None:
    tp.save(path, {"w": tp.ones(2)})
    with pytest.raises(tp.CheckpointError, match=r"'w' is a Tensor in the tree, which cannot change: restore into Var"):
        tp.restore(path, {"w": tp.zeros(2)})


def test_restore_with_strict_false_leaves_out_what_the_tree_lacks(path: Path) -> None:
    variables, optimizer = trained("Adam")
    tp.save(path, {"model": variables, "optimizer": optimizer})
    w = tp.variable(tp.zeros((2, 3)))
    tp.restore(path, {"model": {"w": w}}, strict=False)
    assert w.numpy().tobytes() == variables["w"].numpy().tobytes()
    listed = r"the tree has no place for 'model.b', 'optimizer.config.beta1', 'optimizer.config.beta2'"
    with pytest.raises(tp.CheckpointError, match=listed):
        tp.restore(path, {"model": {"w": w}})


def test_restore_an_optimizer_from_a_file_without_optimizer_state(path: Path) -> None:
    tp.save(path, {"w": tp.ones(2)})
    with pytest.raises(
        tp.CheckpointError, match=r"'opt': the checkpoint holds no optimizer state there \(the tree has"
    ):
        tp.restore(path, {"w": tp.variable(tp.zeros(2)), "opt": tp.train.Adam()})


def test_an_optimizer_with_slots_for_a_variable_outside_the_tree_is_refused(path: Path) -> None:
    variables, optimizer = trained("Adam")
    with pytest.raises(tp.CheckpointError, match=r"optimizer 'opt' has slots for variable 'b' \(float32\[3\]\), which"):
        tp.save(path, {"w": variables["w"], "opt": optimizer})
    assert not path.exists()


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_every_optimizer_restores_to_the_same_next_step(path: Path, kind: str) -> None:
    variables, optimizer = trained(kind, steps=3)
    tp.save(path, {"model": variables, "optimizer": optimizer})
    fresh = {"w": tp.variable(tp.zeros((2, 3))), "b": tp.variable(tp.zeros(3))}
    other = OPTIMIZERS[kind]()
    tp.restore(path, {"model": fresh, "optimizer": other})
    loss = lambda m: lambda: tp.sum(tp.square(tp.ones((1, 2)) @ m["w"] + m["b"]))
    optimizer.minimize(loss(variables), list(variables.values()))
    other.minimize(loss(fresh), list(fresh.values()))
    for name in variables:
        assert fresh[name].numpy().tobytes() == variables[name].numpy().tobytes()


def test_restore_into_a_traced_step_goes_on_from_the_restored_state(path: Path) -> None:
    w = tp.variable([1.0, -2.0, 3.0])
    optimizer = tp.train.Adam(0.1)
    step = tp.function(lambda: optimizer.minimize(lambda: tp.sum(tp.square(w)), [w]))
    for _ in range(3):
        step()
    tp.save(path, {"w": w, "optimizer": optimizer})
    for _ in range(2):
        step()
    expected = w.numpy().copy()
    tp.restore(path, {"w": w, "optimizer": optimizer})  # back to step 3, with the trace already made
    assert optimizer.iterations == 3
    for _ in range(2):
        step()
    assert step.trace_count == 1  # the trace made before the restore, replayed with the restored state
    assert w.numpy().tobytes() == expected.tobytes()


# -- Optimizer.state() / load_state() -------------------------------------------------------------------------------


def test_state_names_the_class_iterations_config_and_slots() -> None:
    _, optimizer = trained("RMSProp-centered")
    state = optimizer.state()
    assert state.kind == "RMSProp"
    assert state.iterations == 2
    assert state.config == optimizer.get_config()
    assert [v.name for v, _ in state.slots] == ["w", "b"]
    assert [sorted(s) for _, s in state.slots] == [["mg", "momentum", "rms"]] * 2


def test_load_state_takes_the_hyper_parameters_and_slot_names_of_the_state() -> None:
    _, optimizer = trained("RMSProp-centered")
    plain = tp.train.RMSProp(0.5)
    assert plain.slot_names == ("rms", "momentum")
    plain.load_state(optimizer.state())
    assert plain.centered
    assert plain.slot_names == ("rms", "momentum", "mg")
    assert plain.get_config() == optimizer.get_config()


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (lambda s: OptimizerState("SGD", s.iterations, s.config, s.slots), r"the state is a SGD's, but this optimizer"),
        (lambda s: OptimizerState(s.kind, -1, s.config, s.slots), r"iterations must be an int >= 0, got -1"),
        (lambda s: OptimizerState(s.kind, s.iterations, {"learning_rate": 0.1}, s.slots), r"the state lacks \['beta1'"),
        (
            lambda s: OptimizerState(s.kind, s.iterations, {**s.config, "beta1": 1.5}, s.slots),
            r"hyper-parameters are refused: Adam: beta1 must be in \[0, 1\), got 1.5",
        ),
        (
            lambda s: OptimizerState(s.kind, s.iterations, s.config, ((s.slots[0][0], {"m": s.slots[0][1]["m"]}),)),
            r"variable 'w' needs slots \['m', 'v'\]; the state lacks \['v'\]",
        ),
        (
            lambda s: OptimizerState(s.kind, s.iterations, s.config, ((s.slots[0][0], s.slots[1][1]),)),
            r"slot 'm' for variable 'w' is float32\[3\], but the variable is float32\[2, 3\]",
        ),
        (lambda s: ("not", "a state"), r"the state must be a tp.train.OptimizerState"),
    ],
)
def test_load_state_checks_everything_first(change: Callable[[OptimizerState], object], pattern: str) -> None:
    _, optimizer = trained("Adam")
    target = tp.train.Adam(0.3)
    with pytest.raises(tp.TensorplugError, match=rf"^Adam.load_state\(\): .*{pattern}"):
        target.load_state(change(optimizer.state()))  # type: ignore[arg-type]
    assert target.iterations == 0
    assert target.learning_rate == 0.3
    assert target.state().slots == ()


def test_load_state_resets_the_slots_of_variables_the_state_lacks() -> None:
    w = tp.variable([1.0, 2.0])
    optimizer = tp.train.Momentum(0.1, 0.9)
    blank = optimizer.state()
    optimizer.minimize(lambda: tp.sum(w * w), [w])
    optimizer.load_state(blank)
    assert optimizer.iterations == 0
    ((_, slots),) = optimizer.state().slots
    assert slots["momentum"].tolist() == [0.0, 0.0]


def test_checkpoint_file_entries_of_an_optimizer(path: Path) -> None:
    variables, optimizer = trained("Momentum")
    tp.save(path, {"model": variables, "opt": optimizer})
    arrays = safetensors.numpy.load_file(path)
    assert sorted(arrays) == [
        "model.b",
        "model.w",
        "opt.config.learning_rate",
        "opt.config.momentum",
        "opt.config.use_nesterov",
        "opt.iterations",
        "opt.slots.model.b.momentum",
        "opt.slots.model.w.momentum",
    ]
    assert arrays["opt.iterations"].dtype == np.int64
    assert arrays["opt.iterations"].shape == ()
    assert int(arrays["opt.iterations"]) == 2
    assert arrays["opt.config.use_nesterov"].dtype == np.bool_
    assert float(arrays["opt.config.learning_rate"]) == 0.1
    with safetensors.safe_open(path, framework="np") as f:
        assert json.loads(f.metadata()["tensorplug.optimizers"]) == {"opt": "Momentum"}


def test_restore_a_model_part_and_its_optimizer_with_strict_false(path: Path) -> None:
    variables, optimizer = trained("Adam")
    tp.save(path, {"model": variables, "optimizer": optimizer})
    w = tp.variable(tp.zeros((2, 3)))
    other = tp.train.Adam()
    with pytest.raises(tp.CheckpointError) as caught:
        tp.restore(path, {"model": {"w": w}, "optimizer": other})
    assert "'optimizer.slots.model.b.m': Adam has slots ['m', 'v'] for the tree's Variables" in str(caught.value)
    tp.restore(path, {"model": {"w": w}, "optimizer": other}, strict=False)  # b and its slots left out
    assert other.iterations == 2
    assert [(v is w, sorted(slots)) for v, slots in other.state().slots] == [(True, ["m", "v"])]


def test_a_restore_that_fails_while_committing_puts_everything_back(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorplug.train import _checkpoint

    variables, optimizer = trained("Momentum")
    tp.save(path, {"model": variables, "optimizer": optimizer})
    w, b = tp.variable(tp.zeros((2, 3))), tp.variable(tp.zeros(3))
    other = tp.train.Momentum(0.1, 0.9, use_nesterov=True)
    real = _checkpoint.commit_state
    calls = []

    def failing(*args: object) -> None:
        calls.append(args)
        if len(calls) == 1:  # the restore's; the second call puts the old state back
            raise MemoryError("out of memory while restoring")
        real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_checkpoint, "commit_state", failing)
    with pytest.raises(MemoryError):
        tp.restore(path, {"model": {"w": w, "b": b}, "optimizer": other})
    assert w.tolist() == [[0.0] * 3] * 2  # assigned, then put back
    assert b.tolist() == [0.0] * 3
    assert other.iterations == 0
    assert len(calls) == 2
