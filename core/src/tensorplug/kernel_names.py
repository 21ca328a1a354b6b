"""The canonical kernel names: the one place they are spelled.

Names follow TensorFlow.js's kernel names (see KERNELS.md); ops, gradients,
backends and the conformance tables all refer to these constants.
"""

from __future__ import annotations

from typing import Final

# Elementwise unary (input "x")
NEG: Final = "Neg"
EXP: Final = "Exp"
LOG: Final = "Log"
SQRT: Final = "Sqrt"
SQUARE: Final = "Square"
TANH: Final = "Tanh"
SIGMOID: Final = "Sigmoid"
RELU: Final = "Relu"

# Elementwise binary, broadcasting (inputs "a", "b")
ADD: Final = "Add"
SUB: Final = "Sub"
MULTIPLY: Final = "Multiply"
REAL_DIV: Final = "RealDiv"
POW: Final = "Pow"
MAXIMUM: Final = "Maximum"
EQUAL: Final = "Equal"
NOT_EQUAL: Final = "NotEqual"
LESS: Final = "Less"
LESS_EQUAL: Final = "LessEqual"
GREATER: Final = "Greater"
GREATER_EQUAL: Final = "GreaterEqual"

# Reductions (input "x"; attrs axis: tuple of ints, keep_dims: bool)
SUM: Final = "Sum"
MEAN: Final = "Mean"
MAX: Final = "Max"

# Linear algebra (inputs "a", "b"; attrs transpose_a, transpose_b)
BATCH_MAT_MUL: Final = "BatchMatMul"

# Shape and dtype
RESHAPE: Final = "Reshape"
TRANSPOSE: Final = "Transpose"
BROADCAST_TO: Final = "BroadcastTo"
CAST: Final = "Cast"
IDENTITY: Final = "Identity"
FILL: Final = "Fill"
SELECT: Final = "Select"

# Neural network
SOFTMAX: Final = "Softmax"

ALL: Final[tuple[str, ...]] = (
    NEG, EXP, LOG, SQRT, SQUARE, TANH, SIGMOID, RELU,
    ADD, SUB, MULTIPLY, REAL_DIV, POW, MAXIMUM,
    EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER, GREATER_EQUAL,
    SUM, MEAN, MAX,
    BATCH_MAT_MUL,
    RESHAPE, TRANSPOSE, BROADCAST_TO, CAST, IDENTITY, FILL, SELECT,
    SOFTMAX,
)  # fmt: skip
"""Every kernel name the core knows, in catalogue order."""
