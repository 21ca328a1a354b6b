"""ONNX export for tensorplug: the ``"onnx"`` format of ``tp.export``.

>>> import tensorplug as tp
>>> model = tp.export(lambda x: tp.relu(x) * 2.0, tp.tensor([[1.0, -1.0]]), format="onnx")
>>> [node.op_type for node in model.graph.node], model.graph.input[0].name
(['Relu', 'Mul'], 'x')

Installing the distribution is all it takes: its entry point declares the format, and ``onnx`` is imported
at the first export. ``exportable_kernels()`` lists the kernels it writes, ``not_exported()`` the others with
why; ``OPSET`` is the default opset (``tp.export(..., opset=N)`` picks a newer one).
"""

from __future__ import annotations

from collections.abc import Mapping

OPSET = 18
"""The default opset: ONNX Runtime 1.14 and later run it, as do most other runtimes."""

__all__ = ["OPSET", "exportable_kernels", "not_exported"]


def exportable_kernels() -> frozenset[str]:
    """The kernels of tensorplug's catalogue the ONNX exporter writes (some for some dtypes only: see the README).

    >>> import tensorplug_onnx
    >>> "BatchMatMul" in tensorplug_onnx.exportable_kernels()
    True
    """
    from tensorplug_onnx._export import exportable_kernels as kernels

    return kernels()


def not_exported() -> Mapping[str, str]:
    """Each kernel of the catalogue the ONNX exporter refuses, with the reason.

    >>> import tensorplug_onnx
    >>> "gradient" in tensorplug_onnx.not_exported()["MaxPoolGrad"]
    True
    """
    from tensorplug_onnx._export import not_exported as refused

    return refused()
