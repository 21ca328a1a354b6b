"""Torch kernels: random family.

Samples are drawn in place into a fresh tensor on ``backend.torch_device``
by a ``torch.Generator`` seeded with the ``seed`` attr; ``seed=None`` uses
torch's default generator of that device, whose state moves on with every
draw. Values differ from the numpy backend's (and between CPU and CUDA).
``tp.random_uniform`` and ``tp.random_normal`` call these kernels only
unseeded (a seeded op draws on the host, the same values on every backend):
a seed reaches them only through ``tp.run_kernel``.
"""

from __future__ import annotations

from typing import Any

import torch

from tensorplug_torch._backend import DTYPES

_SEED_BITS = (1 << 64) - 1  # torch seeds are 64-bit: a larger seed keeps its low 64 bits


def random_uniform(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    out, generator = _empty(attrs, backend), _generator(attrs["seed"], backend)
    low, high = attrs["minval"], attrs["maxval"]
    if out.is_floating_point():
        return out.uniform_(low, high, generator=generator)
    top = None if high > torch.iinfo(out.dtype).max else high  # [low, dtype max] as a whole: torch's to=None
    return out.random_(low, top, generator=generator)


def random_normal(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    return _empty(attrs, backend).normal_(attrs["mean"], attrs["stddev"], generator=_generator(attrs["seed"], backend))


def _empty(attrs: dict[str, Any], backend: Any) -> Any:
    return torch.empty(attrs["shape"], dtype=DTYPES[attrs["dtype"]], device=backend.torch_device)


def _generator(seed: int | None, backend: Any) -> torch.Generator | None:
    if seed is None:
        return None
    return torch.Generator(device=backend.torch_device).manual_seed(seed & _SEED_BITS)
