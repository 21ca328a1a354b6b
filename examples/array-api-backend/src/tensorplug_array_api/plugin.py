"""The plugin module named by the ``tensorplug`` entry point: the backend declaration and its kernel table.

Nothing here imports the array library: the factory and every kernel are
named lazily (``"module:function"``), so ``import tensorplug`` stays cheap;
the namespace is imported when the backend is first initialised.
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug import kernel_names as K

BACKEND = "array_api"
# Below numpy (1) and torch (0 on the CPU): installing this plugin never changes the default backend.
PRIORITY = -10
# The kernels missing from KERNELS (the standard has no function for them) run on this backend.
FALLBACK = "numpy"
_PACKAGE = "tensorplug_array_api"

# kernel name -> "module:function" inside tensorplug_array_api: one line per kernel, grouped by family module.
KERNELS: dict[str, str] = {
    # tensorplug_array_api._unary
    K.ABS: "_unary:abs_",
    K.ACOS: "_unary:acos",
    K.ACOSH: "_unary:acosh",
    K.ASIN: "_unary:asin",
    K.ASINH: "_unary:asinh",
    K.ATAN: "_unary:atan",
    K.ATANH: "_unary:atanh",
    K.COS: "_unary:cos",
    K.COSH: "_unary:cosh",
    K.ELU: "_unary:elu",
    K.EXP: "_unary:exp",
    K.EXPM1: "_unary:expm1",
    K.LOG: "_unary:log",
    K.LOG1P: "_unary:log1p",
    K.NEG: "_unary:neg",
    K.RECIPROCAL: "_unary:reciprocal",
    K.RELU: "_unary:relu",
    K.RELU6: "_unary:relu6",
    K.RSQRT: "_unary:rsqrt",
    K.SELU: "_unary:selu",
    K.SIGMOID: "_unary:sigmoid",
    K.SIN: "_unary:sin",
    K.SINH: "_unary:sinh",
    K.SOFTPLUS: "_unary:softplus",
    K.SQRT: "_unary:sqrt",
    K.SQUARE: "_unary:square",
    K.TAN: "_unary:tan",
    K.TANH: "_unary:tanh",
    K.LEAKY_RELU: "_unary:leaky_relu",
    K.STEP: "_unary:step",
    K.CLIP_BY_VALUE: "_unary:clip_by_value",
    K.CEIL: "_unary:ceil",
    K.FLOOR: "_unary:floor",
    K.ROUND: "_unary:round_",
    K.SIGN: "_unary:sign",
    K.IS_NAN: "_unary:is_nan",
    K.IS_INF: "_unary:is_inf",
    K.IS_FINITE: "_unary:is_finite",
    K.LOGICAL_NOT: "_unary:logical_not",
    # tensorplug_array_api._binary
    K.ADD: "_binary:add",
    K.SUB: "_binary:sub",
    K.MULTIPLY: "_binary:multiply",
    K.REAL_DIV: "_binary:real_div",
    K.POW: "_binary:pow_",
    K.MAXIMUM: "_binary:maximum",
    K.MINIMUM: "_binary:minimum",
    K.SQUARED_DIFFERENCE: "_binary:squared_difference",
    K.ATAN2: "_binary:atan2",
    K.PRELU: "_binary:prelu",
    K.FLOOR_DIV: "_binary:floor_div",
    K.MOD: "_binary:mod",
    K.EQUAL: "_binary:equal",
    K.NOT_EQUAL: "_binary:not_equal",
    K.LESS: "_binary:less",
    K.LESS_EQUAL: "_binary:less_equal",
    K.GREATER: "_binary:greater",
    K.GREATER_EQUAL: "_binary:greater_equal",
    K.LOGICAL_AND: "_binary:logical_and",
    K.LOGICAL_OR: "_binary:logical_or",
    K.LOGICAL_XOR: "_binary:logical_xor",
    K.ADD_N: "_binary:add_n",
    # tensorplug_array_api._reduction
    K.SUM: "_reduction:sum_",
    K.PROD: "_reduction:prod",
    K.MEAN: "_reduction:mean",
    K.MAX: "_reduction:max_",
    K.MIN: "_reduction:min_",
    K.ALL: "_reduction:all_",
    K.ANY: "_reduction:any_",
    K.ARG_MAX: "_reduction:arg_max",
    K.ARG_MIN: "_reduction:arg_min",
    K.CUMSUM: "_reduction:cumsum",
    K.CUMPROD: "_reduction:cumprod",
    # tensorplug_array_api._linalg
    K.BATCH_MAT_MUL: "_linalg:batch_mat_mul",
    # tensorplug_array_api._shape
    K.RESHAPE: "_shape:reshape",
    K.TRANSPOSE: "_shape:transpose",
    K.BROADCAST_TO: "_shape:broadcast_to",
    K.CONCAT: "_shape:concat",
    K.PACK: "_shape:pack",
    K.UNPACK: "_shape:unpack",
    K.SLICE: "_shape:slice_",
    K.STRIDED_SLICE: "_shape:strided_slice",
    K.PAD_V2: "_shape:pad_v2",
    K.MIRROR_PAD: "_shape:mirror_pad",
    K.TILE: "_shape:tile",
    K.REVERSE: "_shape:reverse",
    K.GATHER_V2: "_shape:gather_v2",
    K.GATHER_ND: "_shape:gather_nd",
    K.SPLIT_V: "_shape:split_v",
    K.SELECT: "_shape:select",
    K.ONE_HOT: "_shape:one_hot",
    K.CAST: "_shape:cast",
    K.IDENTITY: "_shape:identity",
    K.ZEROS_LIKE: "_shape:zeros_like",
    K.ONES_LIKE: "_shape:ones_like",
    K.FILL: "_shape:fill",
    K.RANGE: "_shape:range_",
    K.TOP_K: "_shape:top_k",
    # tensorplug_array_api._nn
    K.SOFTMAX: "_nn:softmax",
}

# Not in KERNELS, so run on FALLBACK, because the array API standard has no function to build them from cleanly:
# Erf (no special functions), Einsum, ScatterNd and UnsortedSegmentSum (no scatter-add), the convolutions and
# pooling kernels (no sliding windows), RandomUniform and RandomNormal (no random numbers).


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, f"{_PACKAGE}._backend:ArrayAPIBackend", priority=PRIORITY, fallback=FALLBACK)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return [KernelSpec(name, BACKEND, f"{_PACKAGE}.{target}") for name, target in KERNELS.items()]
