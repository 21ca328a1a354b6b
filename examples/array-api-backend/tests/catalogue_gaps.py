"""What this backend's modules leave out of the catalogue, worked out from the modules themselves."""

from __future__ import annotations


def newer_than_this_backend() -> list[str]:
    """The catalogue kernels this backend's family modules define no function for, outside FALLBACK_KERNELS: the
    kernels added to the catalogue after it was written, which its ``catalogue_kernels`` call leaves to the core's
    decomposition where the kernel has one, else to the fallback (in catalogue order)."""
    import importlib

    from tensorplug import kernel_names as K
    from tensorplug.kernel_factories import kernel_function_name

    from tensorplug_array_api.plugin import FALLBACK_KERNELS

    return [
        name
        for family, names in K.FAMILIES.items()
        for name in names
        if name not in FALLBACK_KERNELS
        and not hasattr(importlib.import_module(f"tensorplug_array_api._{family}"), kernel_function_name(name))
    ]


def decomposed_by_the_core() -> set[str]:
    """The kernels the core declares a decomposition for (composites of other kernels): a backend without one of
    them runs it as that decomposition's ops, before its fallback."""
    import tensorplug as tp

    return {spec.kernel_name for spec in tp.decompositions() if spec.source == "tensorplug"}


def through_the_fallback() -> list[str]:
    """The kernels this backend runs on its fallback: FALLBACK_KERNELS, and the newer kernels without a
    decomposition."""
    from tensorplug_array_api.plugin import FALLBACK_KERNELS

    decomposed = decomposed_by_the_core()
    return [*FALLBACK_KERNELS, *(name for name in newer_than_this_backend() if name not in decomposed)]
