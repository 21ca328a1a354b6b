"""The module named by the ``tensorplug`` entry point: what the distribution declares, every function named lazily
(``"module:attr"``), so that discovering it imports neither NumPy kernels nor ONNX."""

from __future__ import annotations

from tensorplug import DecompositionSpec, GradientSpec, KernelSpec, TranslationSpec, hookimpl

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for


@hookimpl
def tensorplug_kernels() -> list[KernelSpec]:
    return [KernelSpec("Swish", "numpy", "tensorplug_swish._numpy:swish")]


@hookimpl
def tensorplug_decompositions() -> list[DecompositionSpec]:
    return [DecompositionSpec("Swish", "tensorplug_swish._ops:swish_ops")]


@hookimpl
def tensorplug_gradients() -> list[GradientSpec]:
    return [GradientSpec("Swish", "tensorplug_swish._ops:swish_grad", inputs_to_save=("x",))]


@hookimpl
def tensorplug_translations() -> list[TranslationSpec]:
    return [TranslationSpec("onnx", "Swish", "tensorplug_swish._onnx:swish")]
