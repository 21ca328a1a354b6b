"""One kernel table for every backend: ``catalogue_kernels`` derives lazy specs from the catalogue's families.

The kernels it names that a backend's modules do not define (the catalogue grew since the backend was written)
are not registered for that backend; tests/plugins/test_catalogue_growth.py checks the same with an installed
plugin, through ``tensorplug check`` and ``tensorplug info``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._absent_kernels import missing_target
from tensorplug._runtime._registry import LAYER_PLUGIN, kernel_registry
from tensorplug.kernel_factories import catalogue_kernels, kernel_function_name
from tensorplug_numpy._backend import NumpyBackend

# Worked out by hand from the convention: snake_case, digits stay with the word before, a trailing "_" for builtins.
EXPECTED_NAMES = {
    "Abs": "abs_",
    "Sqrt": "sqrt",
    "Relu6": "relu6",
    "Log1p": "log1p",
    "LeakyRelu": "leaky_relu",
    "IsNan": "is_nan",
    "AddN": "add_n",
    "RealDiv": "real_div",
    "Atan2": "atan2",
    "Pow": "pow_",
    "Sum": "sum_",
    "ArgMax": "arg_max",
    "BatchMatMul": "batch_mat_mul",
    "GatherV2": "gather_v2",
    "GatherNd": "gather_nd",
    "PadV2": "pad_v2",
    "SplitV": "split_v",
    "Slice": "slice_",
    "Range": "range_",
    "TopK": "top_k",
    "Conv2D": "conv2d",
    "Conv2DBackpropInput": "conv2d_backprop_input",
    "MaxPoolGrad": "max_pool_grad",
    "UnsortedSegmentSum": "unsorted_segment_sum",
}


@pytest.mark.parametrize(("kernel", "function"), EXPECTED_NAMES.items())
def test_function_names_follow_the_convention(kernel: str, function: str) -> None:
    assert kernel_function_name(kernel) == function


def test_every_catalogue_kernel_gets_a_distinct_identifier() -> None:
    names = [kernel_function_name(k) for k in K.CATALOGUE]
    assert all(name.isidentifier() for name in names)
    assert len(set(names)) == len(K.CATALOGUE)


def test_the_families_partition_the_catalogue() -> None:
    assert [k for family in K.FAMILIES.values() for k in family] == list(K.CATALOGUE)


def test_specs_are_lazy_and_cover_the_catalogue_less_skip_with_renames() -> None:
    specs = catalogue_kernels("mine", "mypkg", skip=[K.ERF, K.EINSUM], rename={K.ROUND: "_unary:rint"})
    by_name = {s.kernel_name: s for s in specs}
    assert set(by_name) == set(K.CATALOGUE) - {K.ERF, K.EINSUM}
    assert all(isinstance(s.kernel, str) and s.backend_name == "mine" for s in specs)
    assert by_name[K.SQRT].kernel == "mypkg._unary:sqrt"
    assert by_name[K.CONV2D_BACKPROP_FILTER].kernel == "mypkg._nn:conv2d_backprop_filter"
    assert by_name[K.ROUND].kernel == "mypkg._unary:rint"
    other_module = catalogue_kernels("mine", "mypkg", modules={"unary": "_elementwise"})
    assert {s.kernel_name: s.kernel for s in other_module}[K.SQRT] == "mypkg._elementwise:sqrt"


@pytest.mark.parametrize(
    "kwargs",
    [{"skip": ["Rleu"]}, {"rename": {"relu": "_unary:relu"}}, {"modules": {"elementwise": "_unary"}}],
    ids=["skip", "rename", "modules"],
)
def test_names_outside_the_catalogue_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="catalogue_kernels\\('mine'\\)"):
        catalogue_kernels("mine", "mypkg", **kwargs)  # type: ignore[arg-type]


# -- a backend whose modules lack kernels the catalogue names ---------------------------------------------------------

# A package of someone else's, as if written before Erf joined the catalogue: its unary module defines Sqrt only, its
# nn module raises on import (a bug to report, not an absence), its shape module imports a library that is not there.
PACKAGE = "tp_unit_grown"
MODULES = {
    "__init__": "",
    "_unary": "from tensorplug_numpy._unary import sqrt\n",
    "_nn": "raise RuntimeError('the nn kernels are broken')\n",
    "_shape": "import tp_unit_not_installed  # noqa: F401\n",
}


@pytest.fixture
def grown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tensorplug_registries: None
) -> Iterator[list[tp.KernelSpec]]:
    """Backends "grown" (no fallback) and "grownfb" (falls back to numpy), their kernels declared as a plugin would."""
    (tmp_path / PACKAGE).mkdir()
    for name, source in MODULES.items():
        (tmp_path / PACKAGE / f"{name}.py").write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    tp.register_backend("grown", NumpyBackend, priority=-50)
    tp.register_backend("grownfb", NumpyBackend, priority=-51, fallback="numpy")
    specs = [*catalogue_kernels("grown", PACKAGE), *catalogue_kernels("grownfb", PACKAGE)]
    for spec in specs:
        kernel_registry.add(spec, LAYER_PLUGIN)
    yield specs  # their kernels go with ``tensorplug_registries``, the backends with the unit conftest's fixture
    for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
        del sys.modules[name]


def test_derived_names_are_optional_and_renamed_ones_are_not() -> None:
    specs = {s.kernel_name: s for s in catalogue_kernels("mine", "mypkg", rename={K.ROUND: "_unary:rint"})}
    assert specs[K.SQRT].optional
    assert specs[K.CONV2D].optional
    assert not specs[K.ROUND].optional


def test_an_undefined_kernel_is_not_registered_and_says_why(grown: list[tp.KernelSpec]) -> None:
    tp.set_backend("grown")
    assert tp.sqrt(tp.tensor([4.0])).tolist() == [2.0]
    with pytest.raises(tp.KernelNotFoundError) as caught:
        tp.erf(tp.tensor([0.5]))
    assert str(caught.value).startswith(
        "No kernel 'Erf' is registered for backend 'grown': a runtime registration names it tp_unit_grown._unary:erf "
        "by convention (catalogue_kernels), but tp_unit_grown._unary defines no erf. Backends that have it: numpy"
    )
    assert tp.get_kernel(K.ERF, "grown") is None
    missing = tp.coverage().missing_for("grown")
    assert K.ERF in missing
    assert K.SQRT not in missing


def test_the_fallback_serves_an_undefined_kernel(grown: list[tp.KernelSpec]) -> None:
    tp.set_backend("grownfb")
    with pytest.warns(tp.FallbackWarning, match="backend 'grownfb' has no kernel 'Erf'"):
        out = tp.erf(tp.tensor([0.5]))
    assert out.backend == "grownfb"
    assert out.tolist() == pytest.approx([0.5204998778])
    assert K.ERF in tp.coverage().fallback_for("grownfb")


def test_a_module_that_raises_on_import_is_still_an_error(grown: list[tp.KernelSpec]) -> None:
    x, kernel = tp.ones((1, 3, 3, 1)), tp.ones((2, 2, 1, 1))  # made on numpy: "grown" has no Fill either
    tp.set_backend("grown")
    with pytest.raises(tp.KernelError, match=r"could not be imported from 'tp_unit_grown\._nn:conv2d': RuntimeError"):
        tp.conv2d(x, kernel)
    with pytest.raises(tp.KernelError, match="No module named 'tp_unit_not_installed'"):
        tp.reshape(x, (9,))
    missing = tp.coverage().missing_for("grown")  # both stay registered: their errors are reported, not hidden
    assert K.CONV2D not in missing
    assert K.RESHAPE not in missing


def test_a_missing_module_or_function_is_absent_and_a_missing_dependency_is_not(grown: list[tp.KernelSpec]) -> None:
    assert missing_target(f"{PACKAGE}._unary:sqrt") is None
    assert missing_target(f"{PACKAGE}._unary:erf") == f"{PACKAGE}._unary defines no erf"
    assert missing_target(f"{PACKAGE}._random:random_normal") == f"there is no module {PACKAGE}._random"
    with pytest.raises(ModuleNotFoundError, match="tp_unit_not_installed"):
        missing_target(f"{PACKAGE}._shape:reshape")
    with pytest.raises(RuntimeError, match="the nn kernels are broken"):
        missing_target(f"{PACKAGE}._nn:conv2d")
