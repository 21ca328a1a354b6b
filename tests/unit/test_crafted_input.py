"""Data from outside that tensorplug must not take at face value: bool arrays whose bytes are not 0/1, numpy masked
arrays, and checkpoint files whose JSON would crash the decoder. Each file is written byte by byte by the test."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug.train._checkpoint_file import JSON_KEYS_KEY, encode

SEVEN = b"\x07\x00\x01\xff"  # bool bytes as np.frombuffer or a foreign file may hold them: 7, 0, 1, 255


def odd_bools() -> np.ndarray:
    array = np.frombuffer(SEVEN, np.bool_)
    assert array.view(np.uint8).tolist() == [7, 0, 1, 255]  # what the test feeds in
    return array


def raw_file(path: Path, header: bytes, data: bytes = b"") -> Path:
    """A safetensors-shaped file: the 8-byte little-endian header length, the header as given, the data."""
    path.write_bytes(len(header).to_bytes(8, "little") + header + data)
    return path


def bool_file(path: Path) -> Path:
    header = json.dumps({"m": {"dtype": "BOOL", "shape": [4], "data_offsets": [0, 4]}}).encode()
    return raw_file(path, header, SEVEN)


def assert_clean_bools(t: tp.Tensor) -> None:
    assert t.dtype == "bool"
    assert t.tolist() == [True, False, True, True]
    assert tp.cast(t, "int32").tolist() == [1, 0, 1, 1]
    assert t.numpy().view(np.uint8).tolist() == [1, 0, 1, 1]


# -- bool bytes other than 0 and 1 -----------------------------------------------------------------------------------


def test_tensor_of_bool_bytes_other_than_0_and_1_holds_true() -> None:
    assert_clean_bools(tp.tensor(odd_bools()))


def test_from_dlpack_of_bool_bytes_other_than_0_and_1_is_refused_naming_what_to_do() -> None:
    with pytest.raises(tp.DTypeError) as caught:
        tp.from_dlpack(odd_bools())
    message = str(caught.value)
    assert "from_dlpack()" in message
    assert "numpy.ndarray of dtype bool" in message
    assert "(4,)" in message
    assert "2 bool byte(s) other than 0 and 1" in message
    assert "x != 0" in message
    assert "tp.tensor(x)" in message


def test_from_dlpack_of_clean_bools_still_shares_memory() -> None:
    source = np.array([True, False, True])
    t = tp.from_dlpack(source)
    assert np.shares_memory(t.numpy(), source)


def test_load_of_a_safetensors_file_with_bool_bytes_other_than_0_and_1(tmp_path: Path) -> None:
    checkpoint = tp.load(bool_file(tmp_path / "bools.safetensors"))
    assert not checkpoint.verified
    assert_clean_bools(checkpoint["m"])


def test_restore_of_a_safetensors_file_with_bool_bytes_other_than_0_and_1(tmp_path: Path) -> None:
    mask = tp.variable(np.zeros(4, np.bool_))
    tp.restore(bool_file(tmp_path / "bools.safetensors"), {"m": mask})
    assert_clean_bools(mask)


# -- masked arrays ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("convert", [tp.tensor, tp.as_tensor, tp.from_dlpack])
def test_a_masked_array_is_refused_naming_filled(convert: object) -> None:
    masked = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
    with pytest.raises(tp.DTypeError) as caught:
        convert(masked)  # type: ignore[operator]
    message = str(caught.value)
    assert "masked array" in message
    assert "shape (3,), dtype float64, 1 masked value(s)" in message
    assert "x.filled(value)" in message


def test_a_masked_array_as_an_operand_is_refused() -> None:
    with pytest.raises(tp.DTypeError, match=r"x\.filled\(value\)"):
        tp.add(tp.tensor([1.0, 1.0]), np.ma.masked_array([1.0, 2.0], mask=[True, False]))


# -- checkpoint headers the JSON decoder cannot take -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "pattern"),
    [
        (b"[" * 100_000, "nested more than 32 levels deep"),
        (b'{"a":' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested more than 32 levels deep"),
        (b'{"a":' + b"{" * 200_000, "nested more than 32 levels deep"),
        (b'{"a":' + b"1" * 5000 + b"}", "not valid JSON: ValueError"),
        (b'{"a":"\xff"}', "not valid JSON: UnicodeDecodeError"),
    ],
)
def test_a_header_the_decoder_cannot_take_is_a_checkpoint_error_naming_the_file(
    tmp_path: Path, header: bytes, pattern: str
) -> None:
    path = raw_file(tmp_path / "crafted.safetensors", header)
    for read in (tp.load, lambda p: tp.restore(p, {})):
        with pytest.raises(tp.CheckpointError) as caught:
            read(path)
        message = str(caught.value)
        assert repr(str(path)) in message
        assert "has a bad header" in message
        assert pattern in message


def test_brackets_inside_strings_do_not_count_as_nesting(tmp_path: Path) -> None:
    path = tmp_path / "strings.safetensors"
    tp.save(path, {"w": tp.tensor([1.0])}, metadata={"note": "[[[[" * 1000 + '"\\'})
    assert tp.load(path).metadata == {"note": "[[[[" * 1000 + '"\\'}


@pytest.mark.parametrize(
    "metadata",
    [
        {"x": "[" * 100_000 + "]" * 100_000, JSON_KEYS_KEY: '["x"]'},  # a JSON value nested too deep
        {"x": "not json", JSON_KEYS_KEY: '["x"]'},
        {JSON_KEYS_KEY: "[" * 100_000},
        {JSON_KEYS_KEY: '[["x"]]'},
    ],
)
def test_damaged_json_metadata_with_valid_checksums_is_a_checkpoint_error(
    tmp_path: Path, metadata: dict[str, str]
) -> None:
    path = tmp_path / "crafted.safetensors"
    path.write_bytes(encode({"w": np.ones(2, np.float32)}, metadata))  # checksums that match the crafted header
    with pytest.raises(tp.CheckpointError) as caught:
        tp.load(path)
    assert repr(str(path)) in str(caught.value)
