"""The canonical kernel names: a constant per kernel, the families and the catalogue.

Names follow TensorFlow.js's kernel names; ops, gradients, backends and the conformance tables refer to
these constants. What each kernel receives and must return (its inputs, attrs, outputs and dtypes, its
gradient, its edge conventions) is its entry in :mod:`tensorplug.kernel_reference`: ``tensorplug kernels
NAME`` prints it.

Generated from the kernel reference's entries (tensorplug/kernel_reference/_<family>.py) by
``python -m tensorplug.kernel_reference --write``: edit the entries, not this file.
"""

from __future__ import annotations

from typing import Final

# Elementwise unary (input x)
ABS: Final = "Abs"
ACOS: Final = "Acos"
ACOSH: Final = "Acosh"
ASIN: Final = "Asin"
ASINH: Final = "Asinh"
ATAN: Final = "Atan"
ATANH: Final = "Atanh"
COS: Final = "Cos"
COSH: Final = "Cosh"
ELU: Final = "Elu"
ERF: Final = "Erf"
EXP: Final = "Exp"
EXPM1: Final = "Expm1"
HARD_SWISH: Final = "HardSwish"
LOG: Final = "Log"
LOG1P: Final = "Log1p"
NEG: Final = "Neg"
RECIPROCAL: Final = "Reciprocal"
RELU: Final = "Relu"
RELU6: Final = "Relu6"
RSQRT: Final = "Rsqrt"
SELU: Final = "Selu"
SIGMOID: Final = "Sigmoid"
SIN: Final = "Sin"
SINH: Final = "Sinh"
SOFTPLUS: Final = "Softplus"
SOFTSIGN: Final = "Softsign"
SQRT: Final = "Sqrt"
SQUARE: Final = "Square"
TAN: Final = "Tan"
TANH: Final = "Tanh"
LEAKY_RELU: Final = "LeakyRelu"
STEP: Final = "Step"
CLIP_BY_VALUE: Final = "ClipByValue"
CEIL: Final = "Ceil"
FLOOR: Final = "Floor"
ROUND: Final = "Round"
SIGN: Final = "Sign"
IS_NAN: Final = "IsNan"
IS_INF: Final = "IsInf"
IS_FINITE: Final = "IsFinite"
LOGICAL_NOT: Final = "LogicalNot"

# Elementwise binary, broadcasting (inputs a, b)
ADD: Final = "Add"
SUB: Final = "Sub"
MULTIPLY: Final = "Multiply"
REAL_DIV: Final = "RealDiv"
POW: Final = "Pow"
MAXIMUM: Final = "Maximum"
MINIMUM: Final = "Minimum"
SQUARED_DIFFERENCE: Final = "SquaredDifference"
ATAN2: Final = "Atan2"
PRELU: Final = "Prelu"
FLOOR_DIV: Final = "FloorDiv"
MOD: Final = "Mod"
EQUAL: Final = "Equal"
NOT_EQUAL: Final = "NotEqual"
LESS: Final = "Less"
LESS_EQUAL: Final = "LessEqual"
GREATER: Final = "Greater"
GREATER_EQUAL: Final = "GreaterEqual"
LOGICAL_AND: Final = "LogicalAnd"
LOGICAL_OR: Final = "LogicalOr"
LOGICAL_XOR: Final = "LogicalXor"
ADD_N: Final = "AddN"

# Reductions and scans (input x)
SUM: Final = "Sum"
PROD: Final = "Prod"
MEAN: Final = "Mean"
MAX: Final = "Max"
MIN: Final = "Min"
ALL: Final = "All"
ANY: Final = "Any"
ARG_MAX: Final = "ArgMax"
ARG_MIN: Final = "ArgMin"
CUMSUM: Final = "Cumsum"
CUMPROD: Final = "Cumprod"

# Linear algebra
BATCH_MAT_MUL: Final = "BatchMatMul"
EINSUM: Final = "Einsum"

# Shape, indexing and creation
RESHAPE: Final = "Reshape"
TRANSPOSE: Final = "Transpose"
BROADCAST_TO: Final = "BroadcastTo"
CONCAT: Final = "Concat"
PACK: Final = "Pack"
UNPACK: Final = "Unpack"
SLICE: Final = "Slice"
STRIDED_SLICE: Final = "StridedSlice"
PAD_V2: Final = "PadV2"
MIRROR_PAD: Final = "MirrorPad"
TILE: Final = "Tile"
REVERSE: Final = "Reverse"
GATHER_V2: Final = "GatherV2"
GATHER_ND: Final = "GatherNd"
SCATTER_ND: Final = "ScatterNd"
UNSORTED_SEGMENT_SUM: Final = "UnsortedSegmentSum"
SPLIT_V: Final = "SplitV"
SELECT: Final = "Select"
ONE_HOT: Final = "OneHot"
CAST: Final = "Cast"
IDENTITY: Final = "Identity"
ZEROS_LIKE: Final = "ZerosLike"
ONES_LIKE: Final = "OnesLike"
FILL: Final = "Fill"
RANGE: Final = "Range"
TOP_K: Final = "TopK"

# Neural network (NHWC)
SOFTMAX: Final = "Softmax"
CONV2D: Final = "Conv2D"
CONV2D_BACKPROP_INPUT: Final = "Conv2DBackpropInput"
CONV2D_BACKPROP_FILTER: Final = "Conv2DBackpropFilter"
MAX_POOL: Final = "MaxPool"
MAX_POOL_GRAD: Final = "MaxPoolGrad"
AVG_POOL: Final = "AvgPool"
AVG_POOL_GRAD: Final = "AvgPoolGrad"

# Random
RANDOM_UNIFORM: Final = "RandomUniform"
RANDOM_NORMAL: Final = "RandomNormal"

UNARY: Final[tuple[str, ...]] = (
    ABS, ACOS, ACOSH, ASIN, ASINH, ATAN, ATANH, COS, COSH, ELU, ERF, EXP, EXPM1, HARD_SWISH, LOG, LOG1P, NEG,
    RECIPROCAL, RELU, RELU6, RSQRT, SELU, SIGMOID, SIN, SINH, SOFTPLUS, SOFTSIGN, SQRT, SQUARE, TAN, TANH, LEAKY_RELU,
    STEP, CLIP_BY_VALUE, CEIL, FLOOR, ROUND, SIGN, IS_NAN, IS_INF, IS_FINITE, LOGICAL_NOT,
)  # fmt: skip
BINARY: Final[tuple[str, ...]] = (
    ADD, SUB, MULTIPLY, REAL_DIV, POW, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, ATAN2, PRELU, FLOOR_DIV, MOD, EQUAL,
    NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_XOR, ADD_N,
)  # fmt: skip
REDUCTION: Final[tuple[str, ...]] = (
    SUM, PROD, MEAN, MAX, MIN, ALL, ANY, ARG_MAX, ARG_MIN, CUMSUM, CUMPROD,
)  # fmt: skip
LINALG: Final[tuple[str, ...]] = (
    BATCH_MAT_MUL, EINSUM,
)  # fmt: skip
SHAPE: Final[tuple[str, ...]] = (
    RESHAPE, TRANSPOSE, BROADCAST_TO, CONCAT, PACK, UNPACK, SLICE, STRIDED_SLICE, PAD_V2, MIRROR_PAD, TILE, REVERSE,
    GATHER_V2, GATHER_ND, SCATTER_ND, UNSORTED_SEGMENT_SUM, SPLIT_V, SELECT, ONE_HOT, CAST, IDENTITY, ZEROS_LIKE,
    ONES_LIKE, FILL, RANGE, TOP_K,
)  # fmt: skip
NN: Final[tuple[str, ...]] = (
    SOFTMAX, CONV2D, CONV2D_BACKPROP_INPUT, CONV2D_BACKPROP_FILTER, MAX_POOL, MAX_POOL_GRAD, AVG_POOL, AVG_POOL_GRAD,
)  # fmt: skip
RANDOM: Final[tuple[str, ...]] = (
    RANDOM_UNIFORM, RANDOM_NORMAL,
)  # fmt: skip

CATALOGUE: Final[tuple[str, ...]] = UNARY + BINARY + REDUCTION + LINALG + SHAPE + NN + RANDOM
"""Every kernel name the core knows, in catalogue order."""

FAMILIES: Final[dict[str, tuple[str, ...]]] = {
    "unary": UNARY,
    "binary": BINARY,
    "reduction": REDUCTION,
    "linalg": LINALG,
    "shape": SHAPE,
    "nn": NN,
    "random": RANDOM,
}
"""The catalogue by family, in catalogue order; a backend keeps each family's kernels in a module ``_<family>``."""

INPUTS: Final[dict[str, tuple[str, ...]]] = {
    ADD: ("a", "b"),
    SUB: ("a", "b"),
    MULTIPLY: ("a", "b"),
    REAL_DIV: ("a", "b"),
    POW: ("a", "b"),
    MAXIMUM: ("a", "b"),
    MINIMUM: ("a", "b"),
    SQUARED_DIFFERENCE: ("a", "b"),
    ATAN2: ("a", "b"),
    PRELU: ("x", "alpha"),
    FLOOR_DIV: ("a", "b"),
    MOD: ("a", "b"),
    EQUAL: ("a", "b"),
    NOT_EQUAL: ("a", "b"),
    LESS: ("a", "b"),
    LESS_EQUAL: ("a", "b"),
    GREATER: ("a", "b"),
    GREATER_EQUAL: ("a", "b"),
    LOGICAL_AND: ("a", "b"),
    LOGICAL_OR: ("a", "b"),
    LOGICAL_XOR: ("a", "b"),
    BATCH_MAT_MUL: ("a", "b"),
    GATHER_V2: ("x", "indices"),
    GATHER_ND: ("params", "indices"),
    SCATTER_ND: ("indices", "updates"),
    UNSORTED_SEGMENT_SUM: ("x", "segment_ids"),
    SELECT: ("condition", "t", "e"),
    CONV2D: ("x", "filter"),
    CONV2D_BACKPROP_INPUT: ("dy", "filter"),
    CONV2D_BACKPROP_FILTER: ("x", "dy"),
    MAX_POOL_GRAD: ("dy", "input", "output"),
    AVG_POOL_GRAD: ("dy", "input"),
}
"""The inputs of each kernel of several, in the order its entry lists them (the order of its gradient's entries)."""
