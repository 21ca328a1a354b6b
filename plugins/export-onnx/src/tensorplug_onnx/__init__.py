"""ONNX export for tensorplug: the ``"onnx"`` format of ``tp.export``.

>>> import tensorplug as tp
>>> model = tp.export(lambda x: tp.relu(x) * 2.0, tp.tensor([[1.0, -1.0]]), format="onnx")
>>> [node.op_type for node in model.graph.node], model.graph.input[0].name
(['Relu', 'Mul'], 'x')

Installing the distribution is all it takes: its entry point declares the format, and ``onnx`` is imported
at the first export. ``exportable_kernels()`` lists the kernels it writes, ``not_exported()`` the others with
why; ``OPSET`` is the default opset (``tp.export(..., opset=N)`` picks a newer one).

A kernel outside the catalogue exports through its translation (``tp.register_translation("onnx", kernel,
translate)``, or a plugin's ``TranslationSpec``), which writes it with :class:`Graph` and reads the step
through :class:`StepView`, refusing with :class:`Refused`; or as its decomposition. ``Graph``, ``StepView`` and
``Refused`` import ``onnx`` when first named.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tensorplug_onnx._graph import Graph, Refused, StepView

OPSET = 18
"""The default opset: ONNX Runtime 1.14 and later run it, as do most other runtimes."""

__all__ = ["OPSET", "Graph", "Refused", "StepView", "exportable_kernels", "not_exported"]


def __getattr__(name: str) -> Any:
    """``Graph``, ``StepView`` and ``Refused``, the names a translation writes with, imported when first named (so
    that discovering the plugin never imports ``onnx``)."""
    if name in ("Graph", "StepView", "Refused"):
        from tensorplug_onnx import _graph

        return getattr(_graph, name)
    raise AttributeError(f"module 'tensorplug_onnx' has no attribute {name!r}")


def exportable_kernels() -> frozenset[str]:
    """The kernels the ONNX exporter writes (some for some dtypes only: see the README): the catalogue's it has a
    converter for, and those with a registered translation (a kernel with a decomposition exports too, when the
    kernels of its decomposition do).

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
