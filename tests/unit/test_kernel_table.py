"""One kernel table for every backend: ``catalogue_kernels`` derives lazy specs from the catalogue's families."""

from __future__ import annotations

import importlib

import pytest

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._registry import resolve
from tensorplug.kernel_factories import catalogue_kernels, kernel_function_name

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


def test_the_numpy_plugin_declares_every_catalogue_kernel_and_each_resolves() -> None:
    plugin = importlib.import_module("tensorplug_numpy.plugin")
    specs = plugin.tensorplug_kernels()
    assert sorted(s.kernel_name for s in specs) == sorted(K.CATALOGUE)
    for spec in specs:
        assert callable(resolve(spec.kernel, spec.kernel_name)), spec.kernel_name
    registered = {s.kernel_name: s.kernel for s in tp.kernels_for_backend("numpy")}
    assert registered == {s.kernel_name: s.kernel for s in specs}
