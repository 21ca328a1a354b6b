"""The checkpoint file: the safetensors format with an integrity check, written so that a crash (a kill, a full
disk, a power cut after the call returned) never leaves a damaged file where a good one was.

A file is an 8-byte little-endian header length, a JSON header (each tensor's dtype, shape and byte offsets, and
``__metadata__``: strings), then the tensors' bytes, back to back: the safetensors format, read and written by the
``safetensors`` package (imported on first use, never by ``import tensorplug``). tensorplug adds these entries to
``__metadata__``:

- ``tensorplug.format``: ``"1"``, the version of what follows;
- ``tensorplug.data_sha256``: the SHA-256 of every byte after the header;
- ``tensorplug.header_sha256``: the SHA-256 of the header's bytes, as written, with this digest itself written as
  64 zeros; so every byte of the file is covered by one digest or the other;
- ``tensorplug.json_keys`` (when needed): the user metadata keys whose values were stored as JSON (numbers, flags);
- ``tensorplug.optimizers`` (when the checkpoint holds an optimizer): each optimizer's name and class, as JSON.

Reading checks, before any tensor is made: the header length against the file's size, the header (valid JSON,
strings for metadata), the header's digest, the data's length against the header, the data's digest. A
safetensors file written by someone else carries no digest: it is read as it is (``verified`` False), with the
checks the safetensors package makes.

Writing goes to a temporary file in the target's folder (``.<name>.<host>-<pid>-<random>.tmp``: hidden, never
named like a checkpoint), is fsynced, then renamed over the target (``os.replace``: atomic), and the folder is
fsynced so that the rename itself is durable (where the system allows it: not on Windows). A save that dies
leaves the previous file whole; its temporary file is removed by the next save of the same target in a
process of the same host, once the process that made it is gone.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from tensorplug._runtime._dtypes import DTYPES
from tensorplug._runtime._errors import TensorplugError

__all__ = [
    "DATA_SHA_KEY",
    "FORMAT",
    "FORMAT_KEY",
    "HEADER_SHA_KEY",
    "JSON_KEYS_KEY",
    "OPTIMIZERS_KEY",
    "RESERVED_PREFIX",
    "SAFETENSORS_DTYPES",
    "CheckpointError",
    "FileContents",
    "decode_json",
    "encode",
    "read_file",
    "temporary_files",
    "write_atomically",
]

RESERVED_PREFIX: Final = "tensorplug."
FORMAT_KEY: Final = "tensorplug.format"
DATA_SHA_KEY: Final = "tensorplug.data_sha256"
HEADER_SHA_KEY: Final = "tensorplug.header_sha256"
JSON_KEYS_KEY: Final = "tensorplug.json_keys"
OPTIMIZERS_KEY: Final = "tensorplug.optimizers"
FORMAT: Final = "1"
_KNOWN_KEYS: Final = frozenset({FORMAT_KEY, DATA_SHA_KEY, HEADER_SHA_KEY, JSON_KEYS_KEY, OPTIMIZERS_KEY})
_DIGEST_KEYS: Final = (FORMAT_KEY, DATA_SHA_KEY, HEADER_SHA_KEY)  # every tensorplug file has all three
_PLACEHOLDER: Final = "0" * 64
_MAX_HEADER: Final = 100_000_000  # the safetensors package's own limit
_MAX_NESTING: Final = 32
"""The deepest nesting of JSON arrays and objects read from a file (a safetensors header nests 3 deep: the header,
a tensor's entry, its shape), checked before decoding: Python's JSON decoder recurses once per level."""
_JSON_STRING: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_BRACKET_STEP: Final = np.zeros(256, dtype=np.int32)
_BRACKET_STEP[list(b"[{")] = 1
_BRACKET_STEP[list(b"]}")] = -1

SAFETENSORS_DTYPES: Final[dict[str, str]] = {
    "float32": "F32",
    "float64": "F64",
    "int32": "I32",
    "int64": "I64",
    "bool": "BOOL",
}
"""Each tensorplug dtype's safetensors name."""
assert set(SAFETENSORS_DTYPES) == set(DTYPES), "every tensorplug dtype needs a safetensors name"
_FROM_SAFETENSORS: Final = {code: name for name, code in SAFETENSORS_DTYPES.items()}
_OTHER_DTYPES: Final = {
    "F16": "float16",
    "BF16": "bfloat16",
    "F8_E4M3": "float8_e4m3",
    "F8_E5M2": "float8_e5m2",
    "I8": "int8",
    "U8": "uint8",
    "I16": "int16",
    "U16": "uint16",
    "U32": "uint32",
    "U64": "uint64",
    "C64": "complex64",
}

_CHUNK = 1 << 22
"""Bytes per write call (4 MiB)."""

_crash_hook: Callable[[str], None] | None = None
"""For the crash tests only: called with the name of each point a save passes (``created``, ``wrote`` after each
chunk, ``written``, ``synced``, ``replaced``, ``done``), so that a test can kill the process exactly there."""

_HOST: Final = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


class CheckpointError(TensorplugError, ValueError):
    """A checkpoint cannot be written, read or restored: a damaged or truncated file, a tree that does not match."""

    __module__ = "tensorplug"  # its public name, tp.CheckpointError, in tracebacks and reprs


@dataclass(frozen=True)
class FileContents:
    """What a checkpoint file holds: its tensors (host arrays), its ``__metadata__`` (strings), and whether its
    digests were checked (False for a safetensors file that has none)."""

    arrays: dict[str, np.ndarray]
    metadata: dict[str, str]
    verified: bool


# -- writing ----------------------------------------------------------------------------------------------------------


def encode(arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> bytearray:
    """The bytes of a checkpoint file holding ``arrays`` (C-contiguous, of tensorplug dtypes) and ``metadata``,
    with its format version and both digests."""
    from safetensors.numpy import save

    entries = {**metadata, FORMAT_KEY: FORMAT, DATA_SHA_KEY: _PLACEHOLDER, HEADER_SHA_KEY: _PLACEHOLDER}
    blob = bytearray(save(arrays, metadata=entries))
    end = 8 + int.from_bytes(blob[:8], "little")
    view = memoryview(blob)
    data_at = _digest_at(blob, end, DATA_SHA_KEY, _PLACEHOLDER)
    header_at = _digest_at(blob, end, HEADER_SHA_KEY, _PLACEHOLDER)
    assert data_at is not None, "the safetensors package wrote the metadata otherwise"
    assert header_at is not None, "the safetensors package wrote the metadata otherwise"
    blob[data_at : data_at + 64] = hashlib.sha256(view[end:]).hexdigest().encode()
    blob[header_at : header_at + 64] = hashlib.sha256(view[8:end]).hexdigest().encode()
    view.release()
    return blob


def write_atomically(path: Path, blob: bytes | bytearray, where: str) -> None:
    """Write ``blob`` to ``path`` so that ``path`` holds either its old contents or all of ``blob``, whatever
    happens: a temporary file in the same folder, written, fsynced, renamed over ``path``; then the folder is
    fsynced. A failure removes the temporary file and leaves ``path`` as it was."""
    if path.is_symlink():  # write where the link points (the rename must stay within that file's folder)
        path = Path(os.path.realpath(path))
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"{where}: the folder {str(folder)!r} does not exist; create it first")
    temporary = folder / f".{path.name}.{_HOST}-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, 0o666)  # the usual permissions (the umask applies), as open() gives
    try:
        try:
            _point("created")
            if path.exists():  # keep the permissions the old file had (a private checkpoint stays private)
                os.chmod(temporary, stat.S_IMODE(path.stat().st_mode))
            view = memoryview(blob)
            for start in range(0, len(view), _CHUNK):
                chunk = view[start : start + _CHUNK]
                while chunk:  # os.write may write less than it was given
                    chunk = chunk[os.write(fd, chunk) :]
                _point("wrote")
            _point("written")  # unbuffered writes: nothing is left in this process to flush
            os.fsync(fd)
            _point("synced")
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            exc.add_note(f"{where}: writing {str(path)!r} (through {temporary.name!r}) failed; the file is unchanged")
        raise
    _point("replaced")
    _sync_folder(folder)
    _point("done")
    _remove_stale(folder, path.name)


def temporary_files(path: Path) -> list[Path]:
    """The temporary files of saves to ``path`` that are still in its folder (saves in progress, or that died)."""
    prefix = f".{path.name}."
    folder = path.parent
    return sorted(folder / n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".tmp"))


def _point(name: str) -> None:
    hook = _crash_hook
    if hook is not None:
        hook(name)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (fsync the folder), where the system lets a folder be opened."""
    if os.name == "nt":  # no folder handles to fsync; NTFS journals the rename itself
        return
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse to fsync a folder (EINVAL): nothing more can be done there
        pass
    finally:
        os.close(fd)


def _remove_stale(folder: Path, name: str) -> None:
    """Remove the temporary files of earlier saves to ``folder / name`` whose process (on this host) is gone."""
    if os.name == "nt":  # os.kill(pid, 0) would end the process there, not probe it
        return
    for temporary in temporary_files(folder / name):
        host, _, rest = temporary.name[len(name) + 2 : -len(".tmp")].partition("-")
        pid_text, _, _ = rest.partition("-")
        if host != _HOST or not pid_text.isdigit() or int(pid_text) == os.getpid():
            continue
        try:
            os.kill(int(pid_text), 0)
            continue  # alive (or a zombie not yet reaped): its save may still be running
        except ProcessLookupError:
            pass
        except OSError:
            continue  # alive, another user's
        with contextlib.suppress(OSError):
            temporary.unlink()


# -- reading ----------------------------------------------------------------------------------------------------------


def read_file(path: Path, where: str) -> FileContents:
    """Read and check the checkpoint at ``path``: a CheckpointError naming the file and what is wrong, rather
    than a tensor that is not what was saved."""
    data = path.read_bytes()
    size = len(data)

    def damaged(what: str, advice: str = "") -> CheckpointError:
        advice = advice or (
            "The file is damaged (cut short by a copy, or changed on disk): load an earlier checkpoint, or save again"
        )
        return CheckpointError(f"{where}: {str(path)!r} {what}. {advice}")

    if size < 8:
        raise damaged(
            f"is truncated or not a safetensors file: it holds {size} bytes, fewer than the 8 of a header length"
        )
    length = int.from_bytes(data[:8], "little")
    if length > min(size - 8, _MAX_HEADER):
        raise damaged(
            f"is truncated or not a safetensors file: its first 8 bytes give a header of {length:,} bytes, but "
            f"{size - 8:,} bytes follow them"
        )
    end = 8 + length
    try:
        header = decode_json(data[8:end])
    except ValueError as exc:
        raise damaged(f"has a bad header ({exc}): it is not a safetensors file, or is damaged") from None
    if not isinstance(header, dict):
        raise damaged(f"has a bad header (a JSON {type(header).__name__}, not an object)")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise damaged("has a bad header (its __metadata__ must map names to strings)")
    ours = sorted(key for key in metadata if key.startswith(RESERVED_PREFIX))
    if ours:
        _verify(data, end, header, metadata, ours, damaged)
    elif data.find(f'{json.dumps(HEADER_SHA_KEY)}:"'.encode(), 8, end) >= 0:  # its __metadata__ entry is damaged
        raise damaged("is a damaged tensorplug checkpoint: its header has a checksum, but outside __metadata__")
    for name, entry in header.items():
        code = entry.get("dtype") if isinstance(entry, dict) else None
        if code not in _FROM_SAFETENSORS and code in _OTHER_DTYPES:
            raise CheckpointError(
                f"{where}: {str(path)!r} holds tensor {name!r} of dtype {code} ({_OTHER_DTYPES[code]}), which "
                f"tensorplug does not have (it has {', '.join(DTYPES)}); convert the file's tensors to one of those "
                "first (with safetensors and numpy or torch)"
            )
    from safetensors import SafetensorError
    from safetensors.numpy import load

    try:
        arrays = load(data)
    except (SafetensorError, KeyError, ValueError, TypeError) as exc:
        raise damaged(f"is not a valid safetensors file ({type(exc).__name__}: {exc})") from None
    return FileContents(arrays, dict(metadata), verified=bool(ours))


def decode_json(text: bytes | str) -> Any:
    """``text`` (UTF-8) decoded as JSON, or a ValueError saying why not: nested deeper than a checkpoint's JSON
    ever is (refused before decoding), not UTF-8, not valid JSON (every error of the decoder is caught)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    depth = _nesting(raw)
    if depth > _MAX_NESTING:
        raise ValueError(f"JSON nested more than {_MAX_NESTING} levels deep, where a safetensors header nests 3")
    try:
        return json.loads(raw.decode("utf-8") if isinstance(text, bytes) else text)
    except Exception as exc:  # UnicodeDecodeError, JSONDecodeError, an integer of too many digits, MemoryError...
        raise ValueError(f"not valid JSON: {type(exc).__name__}: {exc}") from None


def _nesting(raw: bytes) -> int:
    """How deep the JSON arrays and objects in ``raw`` nest (brackets outside strings), counted without decoding
    it and without recursion; counting stops once past the bound."""
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for start in range(0, len(brackets), _CHUNK):
        steps = _BRACKET_STEP[
            np.frombuffer(brackets, dtype=np.uint8, count=min(_CHUNK, len(brackets) - start), offset=start)
        ]
        running = depth + np.cumsum(steps)
        deepest = max(deepest, int(running.max()))
        depth = int(running[-1])
        if deepest > _MAX_NESTING:
            break
    return deepest


def _verify(
    data: bytes,
    end: int,
    header: dict[str, Any],
    metadata: dict[str, str],
    ours: list[str],
    damaged: Callable[..., CheckpointError],
) -> None:
    """Check a tensorplug checkpoint: its format, the header's digest, the data's length and digest."""
    digest = metadata.get(HEADER_SHA_KEY, "")
    at = _digest_at(data, end, HEADER_SHA_KEY, digest) if digest else None
    intact = False
    if at is not None:
        raw = bytearray(data[8:end])
        raw[at - 8 : at - 8 + 64] = _PLACEHOLDER.encode()
        intact = hashlib.sha256(raw).hexdigest() == digest
    version = metadata.get(FORMAT_KEY)
    if version is not None and version != FORMAT:
        if intact:
            raise damaged(
                f"is a tensorplug checkpoint of format {version!r}; this tensorplug reads format {FORMAT!r}",
                "Upgrade tensorplug to read it",
            )
        raise damaged(
            f"says it is a tensorplug checkpoint of format {version!r} (this tensorplug reads format {FORMAT!r}) and "
            f"fails the header checksum of format {FORMAT!r}: it is damaged, or written by a newer tensorplug",
            "Load an earlier checkpoint, or upgrade tensorplug if a newer one wrote it",
        )
    missing = [key for key in _DIGEST_KEYS if key not in metadata]
    unknown = [key for key in ours if key not in _KNOWN_KEYS]
    if missing or unknown:
        raise damaged(
            f"is a damaged tensorplug checkpoint: its header lacks {missing} or has unknown entries {unknown}"
        )
    if at is None:
        raise damaged("has a damaged header: its header checksum cannot be found as written")
    if not intact:
        raise damaged("fails its header checksum (SHA-256): the header (names, dtypes, shapes, metadata) was changed")
    ends = []
    for entry in header.values():
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not isinstance(offsets, list) or len(offsets) != 2 or not isinstance(offsets[1], int):
            raise damaged("has a bad header (each tensor needs data_offsets [begin, end])")
        ends.append(offsets[1])
    expected = max(ends, default=0)
    held = len(data) - end
    if held < expected:
        raise damaged(
            f"is truncated: its header describes {expected:,} bytes of tensor data, but only {held:,} follow the header"
        )
    if held > expected:
        raise damaged(f"has {held - expected:,} bytes after the {expected:,} bytes of tensor data its header describes")
    if hashlib.sha256(memoryview(data)[end:]).hexdigest() != metadata[DATA_SHA_KEY]:
        raise damaged("fails its data checksum (SHA-256): the tensor data was changed; no tensor of it can be trusted")


def _digest_at(data: bytes | bytearray, end: int, key: str, value: str) -> int | None:
    """Where ``value``, the string value of ``key`` in the header's ``__metadata__``, starts in ``data``; None
    unless it is written exactly once as ``"key":"value"`` (the key of a header entry is unique, and a string
    value cannot hold that text unescaped)."""
    needle = f'{json.dumps(key)}:"{value}"'.encode()
    at = data.find(needle, 8, end)
    if at < 0 or data.find(needle, at + 1, end) >= 0:
        return None
    return at + len(needle) - 65
