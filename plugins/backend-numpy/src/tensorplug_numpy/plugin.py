"""The plugin module named by the ``tensorplug`` entry point: the backend and its kernel table.

Kernels are named lazily (``module:function``), so discovery imports
nothing beyond this module.
"""

from __future__ import annotations

from tensorplug import BackendSpec, KernelSpec, hookimpl
from tensorplug import kernel_names as K

BACKEND = "numpy"
PRIORITY = 1
_MODULE = "tensorplug_numpy._kernels"

# kernel name -> function in tensorplug_numpy._kernels: one line per kernel.
KERNELS: dict[str, str] = {
    K.NEG: "neg",
    K.EXP: "exp",
    K.LOG: "log",
    K.SQRT: "sqrt",
    K.SQUARE: "square",
    K.TANH: "tanh",
    K.SIGMOID: "sigmoid",
    K.RELU: "relu",
    K.ADD: "add",
    K.SUB: "sub",
    K.MULTIPLY: "multiply",
    K.REAL_DIV: "real_div",
    K.POW: "pow_",
    K.MAXIMUM: "maximum",
    K.EQUAL: "equal",
    K.NOT_EQUAL: "not_equal",
    K.LESS: "less",
    K.LESS_EQUAL: "less_equal",
    K.GREATER: "greater",
    K.GREATER_EQUAL: "greater_equal",
    K.SUM: "sum_",
    K.MEAN: "mean",
    K.MAX: "max_",
    K.BATCH_MAT_MUL: "batch_mat_mul",
    K.RESHAPE: "reshape",
    K.TRANSPOSE: "transpose",
    K.BROADCAST_TO: "broadcast_to",
    K.CAST: "cast",
    K.IDENTITY: "identity",
    K.FILL: "fill",
    K.SELECT: "select",
    K.SOFTMAX: "softmax",
}


@hookimpl
def tensorplug_backends() -> list[BackendSpec]:
    return [BackendSpec(BACKEND, "tensorplug_numpy._backend:NumpyBackend", priority=PRIORITY)]


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return [KernelSpec(name, BACKEND, f"{_MODULE}:{attr}") for name, attr in KERNELS.items()]
