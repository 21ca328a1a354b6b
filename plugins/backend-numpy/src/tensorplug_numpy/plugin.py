"""The plugin module named by the ``tensorplug`` entry point: the backend and its kernel table.

Kernels are named lazily (``module:function``), so discovery imports
nothing beyond this module.
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug import kernel_names as K

BACKEND = "numpy"
PRIORITY = 1
_PACKAGE = "tensorplug_numpy"

# kernel name -> "module:function" inside tensorplug_numpy: one line per kernel, grouped by family module.
KERNELS: dict[str, str] = {
    # tensorplug_numpy._elementwise
    K.ABS: "_elementwise:abs_",
    K.ACOS: "_elementwise:acos",
    K.ACOSH: "_elementwise:acosh",
    K.ASIN: "_elementwise:asin",
    K.ASINH: "_elementwise:asinh",
    K.ATAN: "_elementwise:atan",
    K.ATANH: "_elementwise:atanh",
    K.COS: "_elementwise:cos",
    K.COSH: "_elementwise:cosh",
    K.ELU: "_elementwise:elu",
    K.ERF: "_elementwise:erf",
    K.EXP: "_elementwise:exp",
    K.EXPM1: "_elementwise:expm1",
    K.LOG: "_elementwise:log",
    K.LOG1P: "_elementwise:log1p",
    K.NEG: "_elementwise:neg",
    K.RECIPROCAL: "_elementwise:reciprocal",
    K.RELU: "_elementwise:relu",
    K.RELU6: "_elementwise:relu6",
    K.RSQRT: "_elementwise:rsqrt",
    K.SELU: "_elementwise:selu",
    K.SIGMOID: "_elementwise:sigmoid",
    K.SIN: "_elementwise:sin",
    K.SINH: "_elementwise:sinh",
    K.SOFTPLUS: "_elementwise:softplus",
    K.SQRT: "_elementwise:sqrt",
    K.SQUARE: "_elementwise:square",
    K.TAN: "_elementwise:tan",
    K.TANH: "_elementwise:tanh",
    K.LEAKY_RELU: "_elementwise:leaky_relu",
    K.STEP: "_elementwise:step",
    K.CLIP_BY_VALUE: "_elementwise:clip_by_value",
    K.CEIL: "_elementwise:ceil",
    K.FLOOR: "_elementwise:floor",
    K.ROUND: "_elementwise:round_",
    K.SIGN: "_elementwise:sign",
    K.IS_NAN: "_elementwise:is_nan",
    K.IS_INF: "_elementwise:is_inf",
    K.IS_FINITE: "_elementwise:is_finite",
    K.LOGICAL_NOT: "_elementwise:logical_not",
    K.ADD: "_elementwise:add",
    K.SUB: "_elementwise:sub",
    K.MULTIPLY: "_elementwise:multiply",
    K.REAL_DIV: "_elementwise:real_div",
    K.POW: "_elementwise:pow_",
    K.MAXIMUM: "_elementwise:maximum",
    K.MINIMUM: "_elementwise:minimum",
    K.SQUARED_DIFFERENCE: "_elementwise:squared_difference",
    K.ATAN2: "_elementwise:atan2",
    K.PRELU: "_elementwise:prelu",
    K.FLOOR_DIV: "_elementwise:floor_div",
    K.MOD: "_elementwise:mod",
    K.EQUAL: "_elementwise:equal",
    K.NOT_EQUAL: "_elementwise:not_equal",
    K.LESS: "_elementwise:less",
    K.LESS_EQUAL: "_elementwise:less_equal",
    K.GREATER: "_elementwise:greater",
    K.GREATER_EQUAL: "_elementwise:greater_equal",
    K.LOGICAL_AND: "_elementwise:logical_and",
    K.LOGICAL_OR: "_elementwise:logical_or",
    K.LOGICAL_XOR: "_elementwise:logical_xor",
    K.ADD_N: "_elementwise:add_n",
    # tensorplug_numpy._reduction
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
    # tensorplug_numpy._linalg
    K.BATCH_MAT_MUL: "_linalg:batch_mat_mul",
    K.EINSUM: "_linalg:einsum",
    # tensorplug_numpy._shape
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
    K.SCATTER_ND: "_shape:scatter_nd",
    K.UNSORTED_SEGMENT_SUM: "_shape:unsorted_segment_sum",
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
    # tensorplug_numpy._nn
    K.SOFTMAX: "_nn:softmax",
    K.CONV2D: "_nn:conv2d",
    K.CONV2D_BACKPROP_INPUT: "_nn:conv2d_backprop_input",
    K.CONV2D_BACKPROP_FILTER: "_nn:conv2d_backprop_filter",
    K.MAX_POOL: "_nn:max_pool",
    K.MAX_POOL_GRAD: "_nn:max_pool_grad",
    K.AVG_POOL: "_nn:avg_pool",
    K.AVG_POOL_GRAD: "_nn:avg_pool_grad",
    # tensorplug_numpy._random
    K.RANDOM_UNIFORM: "_random:random_uniform",
    K.RANDOM_NORMAL: "_random:random_normal",
}


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, "tensorplug_numpy._backend:NumpyBackend", priority=PRIORITY)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return [KernelSpec(name, BACKEND, f"{_PACKAGE}.{target}") for name, target in KERNELS.items()]
