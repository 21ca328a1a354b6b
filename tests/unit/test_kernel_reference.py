"""The kernel reference (tensorplug.kernel_reference) is complete, matches docs/kernels.md, and agrees with what
the ops actually hand the kernels: every conformance case runs on numpy under a kernel observer, and each call's
input names, dtypes, attr keys, attr types and canonical forms, output count and output dtypes are checked against
the kernel's entry. Observed dtypes must also cover what each entry declares, so an entry can be neither narrower
nor wider than what the ops send."""

from __future__ import annotations

import dataclasses
import math
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._observe import KernelCall, observing
from tensorplug.kernel_reference import (
    FAMILY_TITLES,
    FLOAT,
    REFERENCE,
    Attr,
    EntryError,
    Output,
    Samples,
    check_call,
    entry_text,
    markdown,
    ops_markdown,
)
from tensorplug.testing import all_cases, run_case
from tensorplug.testing.cases._unary import standard_cases

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "kernels.md"


class _Calls:
    synchronize = False

    def __init__(self) -> None:
        self.calls: list[KernelCall] = []

    def kernel_ran(self, call: KernelCall) -> None:
        self.calls.append(call)


@pytest.fixture(scope="module")
def observed() -> list[KernelCall]:
    """Every kernel call of every conformance case (values and gradient checks) on numpy."""
    tp.set_backend("numpy")
    recorder = _Calls()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with observing(recorder):
            for case in all_cases():
                run_case(case)
    return recorder.calls


def test_every_catalogue_kernel_has_exactly_one_entry() -> None:
    assert list(REFERENCE) == list(K.CATALOGUE)
    assert len(REFERENCE) == len(set(K.CATALOGUE)) == len(K.CATALOGUE)  # no name twice
    assert all(entry.name == name for name, entry in REFERENCE.items())
    assert {e.family for e in REFERENCE.values()} == set(FAMILY_TITLES)


def test_docs_kernels_md_is_the_generated_page() -> None:
    assert DOC.read_text() == markdown(), (
        "docs/kernels.md is stale: run `tensorplug kernels --markdown > docs/kernels.md`"
    )


def test_docs_ops_md_is_the_generated_index() -> None:
    assert (ROOT / "docs" / "ops.md").read_text() == ops_markdown(), (
        "docs/ops.md is stale: run `tensorplug kernels --ops > docs/ops.md`"
    )


def test_the_ops_index_has_a_row_per_public_op_linking_its_kernels() -> None:
    rows = [line for line in ops_markdown().splitlines() if line.startswith("| `tp.")]
    assert [row.split("`")[1] for row in rows] == [f"tp.{name}" for name in tp.ops.__all__]
    conv2d = next(row for row in rows if row.startswith("| `tp.conv2d` "))
    assert "[Conv2D](kernels.md#conv2d)" in conv2d
    assert "[Conv2DBackpropFilter](kernels.md#conv2dbackpropfilter) (backward)" in conv2d
    assert next(row for row in rows if row.startswith("| `tp.multiply` ")).endswith("| alias of `tp.mul` |")
    anchors = {f"#{name.lower()}" for name in REFERENCE}
    for link in re.findall(r"\(kernels\.md(#[a-z0-9]+)\)", ops_markdown()):
        assert link in anchors, link


def test_the_ops_index_is_printed_by_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from tensorplug.kernel_reference import main

    assert main(["--ops"]) == 0
    assert capsys.readouterr().out == ops_markdown()


def test_an_entry_with_seven_sample_points_is_refused_where_it_is_made() -> None:
    softsign = REFERENCE["Softsign"]
    assert softsign.samples is not None
    seven = dataclasses.replace(softsign.samples, points=(-20.0, -0.5, 0.0, 1e-4, 1.0, 1e6, 2.0))
    with pytest.raises(EntryError) as caught:
        dataclasses.replace(softsign, samples=seven)
    message = str(caught.value)
    assert message.startswith("kernel reference entry 'Softsign': Samples.points has 7 values; give an even number")
    assert "kernel_reference/_unary.py" in message


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"samples": Samples(special=((math.nan, 1.0), (math.nan,)))}, "Samples.special pairs 2 inputs with 1 results"),
        (
            {"samples": Samples(points=(0.0, 1.0, 2.0, math.inf, 4.0, 5.0))},
            "Samples.points and Samples.grad are finite",
        ),
        ({"numpy": None}, "it gives samples but no numpy formula"),
        ({"outputs": (Output("like:a"),)}, "output dtype 'like:a' is neither a dtype"),
        ({"grad_inputs": ("y",)}, "grad_inputs ('y',) are not all inputs"),
        ({"gradient": "maybe"}, "gradient 'maybe' is none of yes, zero, none"),
        ({"family": "activation"}, "family 'activation' is none of unary, binary"),
        ({"name": "soft_sign"}, "its name is not a CamelCase kernel name"),
        ({"attrs": (Attr("alpha", "double", "a slope"),)}, "attr 'alpha' has type 'double', not one of ATTR_TYPES"),
    ],
)
def test_an_entry_that_contradicts_itself_is_refused_naming_the_problem(change: dict[str, object], says: str) -> None:
    with pytest.raises(EntryError, match=re.escape(says)):
        dataclasses.replace(REFERENCE["Softsign"], **change)  # type: ignore[arg-type]


def test_an_entry_written_in_another_family_s_module_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorplug import kernel_reference

    moved = {**kernel_reference._FAMILY_ENTRIES, "binary": [*kernel_reference._FAMILY_ENTRIES["binary"],
                                                            REFERENCE["Softsign"]]}  # fmt: skip
    monkeypatch.setattr(kernel_reference, "_FAMILY_ENTRIES", moved)
    with pytest.raises(EntryError, match=r"'Softsign' of family 'unary' is written in .*_binary\.py"):
        kernel_reference._gathered()


def test_every_cited_case_exists() -> None:
    ids = {c.id for c in all_cases()}
    missing = [
        f"{e.name}-{c}" for e in REFERENCE.values() for n in e.notes for c in n.cases if f"{e.name}-{c}" not in ids
    ]
    assert missing == []


def test_the_public_ops_named_exist() -> None:
    for entry in REFERENCE.values():
        for text in entry.ops:
            for part in text.split(","):
                word = part.strip().split(" ")[0]
                if word.startswith("tp."):
                    assert hasattr(tp, word[3:]), (entry.name, word)


def test_gradient_entries_agree_with_the_core_gradients() -> None:
    for entry in REFERENCE.values():
        core = [s for s in tp.gradient_stack(entry.name) if s.source == "tensorplug"]
        assert len(core) == 1, entry.name
        assert (core[0].grad is None) == (entry.gradient == "none"), entry.name


@pytest.mark.parametrize("name", [e.name for e in REFERENCE.values() if e.gradient == "zero"])
def test_zero_gradients_are_zero(name: str) -> None:
    op = getattr(tp, REFERENCE[name].op_name)  # tp.step, tp.zeros_like, ...
    x = tp.tensor([-1.3, -0.2, 0.4, 2.0, 2.5], "float64")
    gradient = tp.grad(lambda x: tp.sum(op(x) * x))(x)  # d/dx (op(x) * x) = op(x) when op's gradient is zero
    assert gradient.tolist() == op(x).tolist(), name


def test_every_kernel_call_of_the_conformance_cases_agrees_with_its_entry(observed: list[KernelCall]) -> None:
    problems: list[str] = []
    for call in observed:
        if call.kernel not in REFERENCE:
            continue  # a kernel a case registered for itself, outside the catalogue
        backend = call.backend
        for problem in check_call(call.kernel, call.inputs, call.attrs, call.outputs, backend.dtype_of,
                                  backend.shape_of):  # fmt: skip
            if problem not in problems:
                problems.append(problem)
    assert problems == []


def test_every_kernel_is_observed_and_its_declared_dtypes_all_occur(observed: list[KernelCall]) -> None:
    seen: dict[tuple[str, str], set[str]] = {}
    for call in observed:
        for name, value in call.inputs.items():
            for raw in value if isinstance(value, list) else [value]:
                seen.setdefault((call.kernel, name), set()).add(call.backend.dtype_of(raw))
    kernels = {call.kernel for call in observed}
    assert [k for k in K.CATALOGUE if k not in kernels] == []
    unexercised = [
        (e.name, i.name, sorted(set(i.dtypes) - seen.get((e.name, i.name), set())))
        for e in REFERENCE.values()
        for i in e.inputs
        if set(i.dtypes) - seen.get((e.name, i.name), set())
    ]
    assert unexercised == []


def test_check_call_reports_what_disagrees() -> None:
    import numpy as np

    backend = tp.backend("numpy")
    x = np.zeros((2, 3), np.float32)
    args = (backend.dtype_of, backend.shape_of)
    assert check_call("Sum", {"x": x}, {"axis": (1,), "keep_dims": False}, [np.zeros(2, np.float32)], *args) == []
    assert check_call("Sum", {"x": x}, {"axis": (1, 0), "keep_dims": False}, [np.zeros(())], *args) == [
        "Sum: attr axis=(1, 0) is not a sorted tuple of distinct axes in [0, rank) (rank 2)"
    ]
    assert check_call("Sum", {"x": x}, {"axis": 1, "keepdims": False}, [np.zeros(2)], *args) == [
        "Sum: attrs ['axis', 'keepdims'], the reference says ['axis', 'keep_dims']",
        "Sum: attr axis=1 is not a tuple[int, ...]",
    ]
    assert check_call("Equal", {"a": x, "b": x}, {}, [x], *args) == [
        "Equal: output 0 has dtype float32, the reference says bool (bool)"
    ]
    assert check_call("Unpack", {"value": x}, {"axis": 0, "num": 2}, [x[0]], *args) == [
        "Unpack: 1 outputs, the reference says 2"
    ]
    assert check_call("Concat", {"tensors": x}, {"axis": 0}, [x], *args) == [
        "Concat: input 'tensors' is one tensor, the reference says a list"
    ]


def test_an_entry_reads_well() -> None:
    text = entry_text("FloorDiv")
    assert text.startswith("### FloorDiv\n")
    assert "integer division by zero gives 0" in text
    assert "- gradient: none (declared not differentiable)" in text
    assert "FloorDiv-int-by-zero" in text
    with pytest.raises(KeyError, match="did you mean FloorDiv"):
        entry_text("Floordiv")


STANDARD = ["float32", "float64", "int32", "int64", "bool", "scalar", "empty", "special", "grad"]


def test_every_floating_unary_kernel_gets_its_standard_cases_from_its_entry() -> None:
    floating = [e for e in REFERENCE.values() if e.family == "unary" and e.inputs[0].dtypes == FLOAT and not e.attrs]
    assert [e.name for e in floating if e.numpy is None or e.samples is None] == []
    ids = [c.id for c in all_cases()]
    for entry in floating:
        assert entry.samples is not None
        assert len(entry.samples.points) == 6, entry.name
        assert len(entry.samples.special[0]) == len(entry.samples.special[1]), entry.name
        derived = [c.id for c in standard_cases(entry)]
        assert derived == [f"{entry.name}-{name}" for name in STANDARD]
        assert all(ids.count(case_id) == 1 for case_id in derived), entry.name


def test_an_entry_with_a_formula_and_samples_gives_the_standard_cases() -> None:
    entry = dataclasses.replace(
        REFERENCE["Tanh"],
        numpy=lambda x: x / (1 + abs(x)),
        samples=Samples(special=((math.inf, -0.0), (1.0, -0.0)), points=(-3.0, -1.0, 0.0, 1.0, 3.0, 7.0), ints=(-1, 4)),
    )
    cases = {c.name: c for c in standard_cases(entry)}
    assert list(cases) == STANDARD
    assert all(c.op is tp.tanh and c.kernel == "Tanh" for c in cases.values())
    float32 = cases["float32"]
    assert float32.expected is not None
    assert float32.expected.dtype == np.float32
    np.testing.assert_allclose(float32.expected, [-0.75, -0.5, 0.0, 0.5, 0.75, 0.875])
    np.testing.assert_allclose(cases["int64"].expected, [-0.5, 0.8])  # integer x give float32
    np.testing.assert_allclose(cases["bool"].expected, [0.0, 0.5])
    np.testing.assert_allclose(cases["scalar"].expected, 0.5)
    assert cases["float64"].expected.shape == (2, 3)
    assert cases["special"].expected.tolist() == [1.0, -0.0]  # by hand, not from the formula
    assert cases["grad"].grad
    assert cases["grad"].expected.tolist() == [-1.2 / 2.2, 0.3 / 1.3, 1.5 / 2.5]
    with pytest.raises(ValueError, match="Tanh: its kernel reference entry gives no numpy formula and samples"):
        standard_cases(dataclasses.replace(entry, samples=None))


def test_an_entry_shows_its_special_values() -> None:
    text = entry_text("Atan")
    pairs = "nan -> nan, inf -> 1.5707963267948966, -inf -> -1.5707963267948966"
    assert f"- special values: {pairs} (case: Atan-special)" in text


def test_the_module_and_the_cli_print_the_page(tmp_path: Path) -> None:
    module = subprocess.run(
        [sys.executable, "-m", "tensorplug.kernel_reference"], capture_output=True, text=True, check=True
    )
    assert module.stdout == markdown()
    cli = subprocess.run(
        [sys.executable, "-m", "tensorplug", "kernels", "--markdown"], capture_output=True, text=True, check=True
    )
    assert cli.stdout == markdown()
    one = subprocess.run(
        [sys.executable, "-m", "tensorplug", "kernels", "GatherV2"], capture_output=True, text=True, check=True
    )
    assert one.stdout.startswith("### GatherV2")
    assert "raises an error in the kernel" in one.stdout
    bad = subprocess.run([sys.executable, "-m", "tensorplug", "kernels", "Gather"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "no kernel 'Gather' in the kernel reference" in bad.stderr


def test_the_cli_lists_every_kernel_with_its_inputs_and_attrs() -> None:
    done = subprocess.run([sys.executable, "-m", "tensorplug", "kernels"], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == len(K.CATALOGUE) + 1
    assert lines[0].split()[:5] == ["Abs", "unary", "inputs:", "x", "attrs:"]
    assert next(line for line in lines if line.startswith("Concat ")).split()[3] == "tensors[]"  # a list input


def test_each_kink_of_an_entry_is_a_case_that_pins_the_gradient_there() -> None:
    from tensorplug.kernel_reference._entries import Kink
    from tensorplug.testing.cases._kinks import kink_cases

    relu6 = REFERENCE["Relu6"]
    assert [c.id for c in kink_cases(relu6)] == ["Relu6-kink-0", "Relu6-kink-1"]
    assert "Relu6-kink-1" in {c.id for c in all_cases()}
    tp.set_backend("numpy")
    run_case(kink_cases(relu6)[1])  # dy passes at 6
    other = dataclasses.replace(relu6, kinks=(Kink((6.0,), (0.0,), "at 6 the gradient is 0"),))
    with pytest.raises(AssertionError):
        run_case(kink_cases(other)[0])  # the core's gradient at 6 is dy, not 0: the case fails


def test_a_kink_with_the_wrong_number_of_values_is_refused() -> None:
    from tensorplug.kernel_reference._entries import Kink

    with pytest.raises(EntryError, match="give one value per input"):
        dataclasses.replace(REFERENCE["Maximum"], kinks=(Kink((1.0,), (1.0, 0.0), "a tie"),))
