"""A checkpoint is whole or refused: saves killed (SIGKILL) at every point of the write and at random times always
leave the previous or the new checkpoint, intact; flipped bytes and cut files give a clear error naming the file,
never a tensor that differs from what was saved."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.train._checkpoint_file import temporary_files

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the crash test forks (POSIX)")


def version_tree(version: int) -> dict[str, tp.Tensor]:
    """Checkpoint ``version``: every value tells which version it is."""
    return {
        "w": tp.tensor(np.arange(40, dtype=np.float32).reshape(8, 5) + 1000 * version),
        "step": tp.tensor(version, "int64"),
        "mask": tp.tensor(np.arange(7) % (version + 2) == 0),
        "scale": tp.tensor([version / 3.0, -version], "float64"),
    }


def assert_is_version(checkpoint: tp.Checkpoint, version: int) -> None:
    expected = version_tree(version)
    assert sorted(checkpoint) == sorted(expected)
    for name, t in expected.items():
        assert checkpoint[name].dtype == t.dtype
        assert checkpoint[name].numpy().tobytes() == t.numpy().tobytes(), (name, version)
    assert checkpoint.metadata == {"version": version}
    assert checkpoint.verified


# -- killed saves -----------------------------------------------------------------------------------------------------

# The saving process: for each trial, save version 0 in a new folder, then fork a child that saves version 1 (then
# 2, 3... for a kill at a random time) and is killed by SIGKILL: by itself at a chosen point of the save (the save's
# crash hook names each point it passes), or by this process after a random delay. Forking keeps each trial to a
# few milliseconds, where a fresh interpreter per kill would take a quarter of a second.
SAVER = textwrap.dedent(
    """
    import json, os, random, signal, sys, time
    sys.path.insert(0, sys.argv[3])
    import tensorplug as tp
    from tensorplug.train import _checkpoint_file
    from test_checkpoint_integrity import version_tree

    root, trials = sys.argv[1], json.loads(sys.argv[2])
    _checkpoint_file._CHUNK = 64  # many writes per save, to kill between them
    random.seed(0)
    probe = os.path.join(root, "probe.safetensors")
    started = time.perf_counter()
    for _ in range(10):
        tp.save(probe, version_tree(1), metadata={"version": 1})
    save_time = (time.perf_counter() - started) / 10
    os.unlink(probe)
    results = []
    for i, trial in enumerate(trials):
        folder = os.path.join(root, f"trial{i:03d}")
        os.mkdir(folder)
        path = os.path.join(folder, "ckpt.safetensors")
        tp.save(path, version_tree(0), metadata={"version": 0})
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            if trial["kind"] == "point":
                passed = {}
                def hook(point):
                    passed[point] = passed.get(point, 0) + 1
                    if point == trial["point"] and passed[point] == trial["count"]:
                        os.kill(os.getpid(), signal.SIGKILL)
                _checkpoint_file._crash_hook = hook
                tp.save(path, version_tree(1), metadata={"version": 1})
                os.write(write, b"the save was not killed\\n")
                os._exit(3)
            version = 1
            while True:  # saves until it is killed
                tp.save(path, version_tree(version), metadata={"version": version})
                os.write(write, f"{version}\\n".encode())
                version += 1
        os.close(write)
        if trial["kind"] == "random":
            time.sleep(random.uniform(0, 3 * save_time))
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        with os.fdopen(read) as lines:
            said = lines.read().split()
        results.append({
            "folder": folder,
            "killed": os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL,
            "said": said,
        })
    print(json.dumps({"save_ms": save_time * 1e3, "results": results}))
    """
)
# Each point a save passes, in order (``wrote`` after each 64-byte chunk: a file of ~700 bytes has 11 of them).
POINTS = ["created", "wrote", "written", "synced", "replaced", "done"]
BEFORE_RENAME = {"created", "wrote", "written", "synced"}


def chunks(folder: Path) -> int:
    """How many 64-byte chunks a save of ``version_tree(1)`` writes."""
    probe = folder / "probe.safetensors"
    tp.save(probe, version_tree(1), metadata={"version": 1})
    size = probe.stat().st_size
    probe.unlink()
    return -(-size // 64)


def test_saves_killed_at_every_point_and_at_random_times_leave_a_whole_checkpoint(tmp_path: Path) -> None:
    writes = chunks(tmp_path)
    chosen = [{"kind": "point", "point": p, "count": 1} for p in POINTS if p != "wrote"]
    chosen += [{"kind": "point", "point": "wrote", "count": n} for n in range(1, writes + 1)]
    trials = chosen * 6  # every point of the save, six times over
    trials += [{"kind": "random"}] * (200 - len(trials))
    assert len(chosen) >= 15
    assert len(trials) == 200
    done = subprocess.run(
        [sys.executable, "-c", SAVER, str(tmp_path), json.dumps(trials), str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    results = report["results"]
    assert len(results) == 200
    outcomes = {"previous": 0, "new": 0, "stray temporary files": 0}
    for trial, result in zip(trials, results, strict=True):
        folder = Path(result["folder"])
        path = folder / "ckpt.safetensors"
        assert result["killed"], (trial, result)  # SIGKILL, every time: no save ran to its end unkilled
        checkpoint = tp.load(path)  # the checkpoint is never damaged
        if trial["kind"] == "point":
            assert result["said"] == []
            version = 0 if trial["point"] in BEFORE_RENAME else 1
        else:
            last = int(result["said"][-1]) if result["said"] else 0
            version = checkpoint.metadata["version"]
            assert version in (last, last + 1), (last, version)  # what the last finished save wrote, or the next
        assert_is_version(checkpoint, version)
        outcomes["previous" if version == (0 if trial["kind"] == "point" else last) else "new"] += 1
        # Nothing else in the folder passes for a checkpoint: only the killed save's hidden temporary file.
        strays = [p for p in folder.iterdir() if p != path]
        assert strays == temporary_files(path)
        assert all(p.name.startswith(".ckpt.safetensors.") and p.name.endswith(".tmp") for p in strays)
        if trial["kind"] == "point":
            assert len(strays) == (1 if trial["point"] in BEFORE_RENAME else 0), (trial, strays)
        outcomes["stray temporary files"] += len(strays)
        for stray in strays:  # a partial one is refused; a whole one (killed before its rename) is the new version
            loaded = load_or_error(stray)
            partial = trial.get("point") == "created" or (trial.get("point") == "wrote" and trial["count"] < writes)
            whole = trial.get("point") in ("written", "synced") or trial.get("count") == writes
            if isinstance(loaded, tp.CheckpointError):
                assert str(stray) in str(loaded)
                assert "truncated" in str(loaded)
                assert not whole
            else:
                assert not partial
                assert_is_version(loaded, loaded.metadata["version"])
        # The next save in a living process removes the dead save's temporary file.
        tp.save(path, version_tree(7), metadata={"version": 7})
        assert_is_version(tp.load(path), 7)
        assert [p.name for p in folder.iterdir()] == [path.name]
    print(
        f"200 saves killed (SIGKILL): {len(chosen) * 6} at chosen points, {200 - len(chosen) * 6} at random times "
        f"(a save took {report['save_ms']:.2f} ms); the checkpoint held {outcomes}"
    )


def load_or_error(path: Path) -> tp.Checkpoint | tp.CheckpointError:
    try:
        return tp.load(path)
    except tp.CheckpointError as exc:
        return exc


# -- damaged files ----------------------------------------------------------------------------------------------------


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, bytes]:
    path = tmp_path / "good.safetensors"
    w = tp.variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4), name="w")
    optimizer = tp.train.Adam(0.1)
    optimizer.minimize(lambda: tp.sum(w * w), [w])
    tp.save(path, {"model": {"w": w, "ids": tp.tensor([3, 1, 2], "int64")}, "opt": optimizer}, metadata={"epoch": 4})
    return path, path.read_bytes()


@pytest.mark.parametrize("mask", [0x01, 0x80, 0xFF])
def test_a_flipped_byte_anywhere_is_refused_with_the_file_named(
    tmp_path: Path, saved: tuple[Path, bytes], mask: int
) -> None:
    _, data = saved
    damaged = tmp_path / "damaged.safetensors"
    kinds: dict[str, int] = {}
    for position in range(len(data)):
        flipped = bytearray(data)
        flipped[position] ^= mask
        damaged.write_bytes(flipped)
        with pytest.raises(tp.CheckpointError) as caught:
            tp.load(damaged)
        message = str(caught.value)
        assert message.startswith(f"tp.load({str(damaged)!r}): {str(damaged)!r} "), message
        assert "load an earlier checkpoint" in message.lower(), message
        kinds_named = ("header checksum", "data checksum", "bad header", "truncated", "damaged tensorplug")
        for kind in kinds_named:
            if kind in message:
                kinds[kind] = kinds.get(kind, 0) + 1
                break
        else:
            raise AssertionError(message)
    assert kinds.get("data checksum", 0) > 0
    if mask == 0x01:  # a header byte still ASCII: the JSON may still parse, and the checksum catches it
        assert kinds.get("header checksum", 0) > 0
    else:  # a byte of the header no longer ASCII: not valid UTF-8, so not valid JSON
        assert kinds.get("bad header", 0) > 0
    print(f"{len(data)} bytes flipped (xor {mask:#04x}), one at a time, each refused: {kinds}")


def test_a_file_cut_at_any_length_is_refused_as_truncated(tmp_path: Path, saved: tuple[Path, bytes]) -> None:
    _, data = saved
    cut = tmp_path / "cut.safetensors"
    for length in range(len(data)):
        cut.write_bytes(data[:length])
        with pytest.raises(tp.CheckpointError, match=r"truncated") as caught:
            tp.load(cut)
        assert str(cut) in str(caught.value)


def test_restore_from_a_damaged_file_changes_nothing(tmp_path: Path, saved: tuple[Path, bytes]) -> None:
    _, data = saved
    damaged = tmp_path / "damaged.safetensors"
    flipped = bytearray(data)
    flipped[-3] ^= 0x10  # in the tensor data
    damaged.write_bytes(flipped)
    w = tp.variable(tp.zeros((3, 4)))
    optimizer = tp.train.Adam(0.1)
    with pytest.raises(tp.CheckpointError, match=r"fails its data checksum \(SHA-256\): the tensor data was changed"):
        tp.restore(damaged, {"model": {"w": w, "ids": tp.variable([0, 0, 0], dtype="int64")}, "opt": optimizer})
    assert w.tolist() == [[0.0] * 4] * 3
    assert optimizer.iterations == 0


@pytest.mark.parametrize(
    ("change", "pattern"),
    [
        (lambda data: data + b"\0" * 5, r"has 5 bytes after the \d+ bytes of tensor data its header describes"),
        (lambda data: b"", r"is truncated or not a safetensors file: it holds 0 bytes"),
        (
            lambda data: b"hello, world: not a checkpoint",
            r"is truncated or not a safetensors file: its first 8 bytes give a header of [\d,]+ bytes, "
            r"but 22",
        ),
        (lambda data: (4).to_bytes(8, "little") + b"[1] ", r"has a bad header \(a JSON list, not an object\)"),
        (
            lambda data: data.replace(b'"tensorplug.format":"1"', b'"tensorplug.format":"9"'),
            r"says it is a tensorplug checkpoint of format '9' \(this tensorplug reads format '1'\) and fails the "
            r"header checksum of format '1': it is damaged, or written by a newer tensorplug. Load an earlier",
        ),
        (
            lambda data: data.replace(b'"tensorplug.data_sha256"', b'"tensorplug.data_sha257"'),
            r"is a damaged tensorplug checkpoint: its header lacks \['tensorplug.data_sha256'\] or has unknown",
        ),
        (lambda data: data.replace(b'"epoch":"4"', b'"epoch":"5"'), r"fails its header checksum \(SHA-256\)"),
    ],
)
def test_each_kind_of_damage_is_named(tmp_path: Path, saved: tuple[Path, bytes], change: object, pattern: str) -> None:
    _, data = saved
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(change(data))  # type: ignore[operator]
    with pytest.raises(tp.CheckpointError, match=rf"^tp.load\('{damaged}'\): '{damaged}' {pattern}"):
        tp.load(damaged)


def test_a_checkpoint_of_a_newer_format_says_to_upgrade(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug.train import _checkpoint_file

    path = tmp_path / "newer.safetensors"
    monkeypatch.setattr(_checkpoint_file, "FORMAT", "2")  # as a later tensorplug would write it
    tp.save(path, {"w": tp.ones(2)})
    monkeypatch.undo()
    with pytest.raises(
        tp.CheckpointError, match=r"of format '2'; this tensorplug reads format '1'. Upgrade tensorplug"
    ):
        tp.load(path)


def test_the_checkpoint_error_says_what_to_do(tmp_path: Path, saved: tuple[Path, bytes]) -> None:
    _, data = saved
    damaged = tmp_path / "damaged.safetensors"
    damaged.write_bytes(data[:-1])
    with pytest.raises(tp.CheckpointError) as caught:
        tp.load(damaged)
    assert str(caught.value).endswith(
        "The file is damaged (cut short by a copy, or changed on disk): load an earlier checkpoint, or save again"
    )
    assert isinstance(caught.value, ValueError)


def test_random_bytes_are_never_taken_for_a_checkpoint(tmp_path: Path, saved: tuple[Path, bytes]) -> None:
    _, data = saved
    rng = random.Random(0)
    damaged = tmp_path / "damaged.safetensors"
    for _ in range(300):  # several bytes changed at once, anywhere
        changed = bytearray(data)
        for _ in range(rng.randint(2, 6)):
            changed[rng.randrange(len(changed))] = rng.randrange(256)
        if changed == data:
            continue
        damaged.write_bytes(changed)
        with pytest.raises(tp.CheckpointError, match=str(damaged)):
            tp.load(damaged)
