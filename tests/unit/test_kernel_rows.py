"""A kernel's entry in the kernel reference is its one row: kernel_names (the constants, the family tuples, the
catalogue) and the core's gradient table are generated from the entries, and must be up to date."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug.kernel_reference import REFERENCE
from tensorplug.kernel_reference._entries import function, rule
from tensorplug.kernel_reference._generate import (
    constant_name,
    generated_files,
    gradient_table_source,
    kernel_names_source,
)

REGENERATE = "python -m tensorplug.kernel_reference --write"


@pytest.mark.parametrize("path", list(generated_files()), ids=lambda p: p.name)
def test_every_generated_file_is_up_to_date(path: object) -> None:
    files = generated_files()
    assert path in files
    text = files[path]  # type: ignore[index]
    assert path.read_text() == text, f"{path} is out of date with the kernel reference's entries: run {REGENERATE}"  # type: ignore[attr-defined]


def test_the_constant_of_a_kernel_name() -> None:
    names = ["Abs", "Conv2DBackpropInput", "PadV2", "GatherNd", "AddN", "IsNan", "Log1p", "TopK", "HardSwish"]
    assert [constant_name(n) for n in names] == [
        "ABS",
        "CONV2D_BACKPROP_INPUT",
        "PAD_V2",
        "GATHER_ND",
        "ADD_N",
        "IS_NAN",
        "LOG1P",
        "TOP_K",
        "HARD_SWISH",
    ]


def test_the_names_module_holds_each_entry_in_its_family() -> None:
    for entry in REFERENCE.values():
        assert getattr(K, constant_name(entry.name)) == entry.name
        assert entry.name in K.FAMILIES[entry.family]
    assert list(K.CATALOGUE) == list(REFERENCE)


def _new_row() -> list[object]:
    """The entries with one more unary kernel, as an author adds it: a row with its formula and gradient."""
    softsign = REFERENCE["Softsign"]
    twice = dataclasses.replace(
        softsign,
        name="TwiceSoftsign",
        ops=("tp.twice_softsign",),
        numpy=lambda x: 2 * x / (1 + abs(x)),
        grad=rule("mul(div(dy, square(add(abs(x), 1.0))), 2.0)", saves="x"),
    )
    entries = list(REFERENCE.values())
    at = entries.index(softsign) + 1
    return [*entries[:at], twice, *entries[at:]]


def test_a_new_row_gets_its_name_and_its_gradient_generated() -> None:
    entries = _new_row()
    names = kernel_names_source(entries)  # type: ignore[arg-type]
    assert 'TWICE_SOFTSIGN: Final = "TwiceSoftsign"' in names
    namespace: dict[str, object] = {}
    exec(compile(names, "kernel_names", "exec"), namespace)
    assert "TwiceSoftsign" in namespace["UNARY"]  # type: ignore[operator]
    assert namespace["CATALOGUE"].index("TwiceSoftsign") == namespace["CATALOGUE"].index("Softsign") + 1  # type: ignore[attr-defined]
    table = gradient_table_source(entries)  # type: ignore[arg-type]
    line = 'unary("TwiceSoftsign", lambda dy, x: mul(div(dy, square(add(abs(x), 1.0))), 2.0), saves="x"),'
    assert line in table


def test_a_grad_naming_what_is_neither_an_op_nor_a_gradient_helper_is_refused() -> None:
    entries = list(REFERENCE.values())
    entries[0] = dataclasses.replace(entries[0], grad=rule("mul(dy, sgn(x))", saves="x"))
    with pytest.raises(NameError, match="the grad of 'Abs' uses 'sgn', which is not a public op"):
        gradient_table_source(entries)
    entries[0] = dataclasses.replace(entries[0], grad=function("grad_abs", saves=("x",)))
    with pytest.raises(NameError, match="the grad of 'Abs' uses 'grad_abs', which is not a function of"):
        gradient_table_source(entries)


def test_the_registered_core_gradients_are_the_rows_gradients() -> None:
    for entry in REFERENCE.values():
        (spec,) = [s for s in tp.gradient_stack(entry.name) if s.source == "tensorplug"]
        grad = entry.grad
        if grad is not None and grad.function:
            assert spec.grad is not None, entry.name
            assert spec.grad.__name__ == grad.function, entry.name
            assert spec.inputs_to_save == grad.saves, entry.name
            assert spec.outputs_to_save == grad.outputs, entry.name
        elif grad is not None and len(grad.formulas) == 1:
            saves = grad.saves[0] if grad.saves else None
            assert spec.inputs_to_save == (("x",) if saves == "x" else ()), entry.name
            assert spec.outputs_to_save == ((0,) if saves == "y" else ()), entry.name


def test_the_module_checks_the_generated_files() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tensorplug.kernel_reference", "--check"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "every generated file is up to date"
