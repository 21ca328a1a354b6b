"""Gradient functions of the shape, dtype and creation kernels (named by their kernel reference entries)."""

from __future__ import annotations

from typing import Any

from tensorplug._runtime._dtypes import is_floating
from tensorplug._runtime._tensor import Tensor
from tensorplug.ops import cast, transpose, zeros_like


def grad_transpose(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor]:
    perm = attrs["perm"]
    inverse = tuple(sorted(range(len(perm)), key=lambda i: perm[i]))
    return (transpose(dy, inverse),)


def grad_cast(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Tensor | None]:
    """Float to float casts pass the gradient through (cast back); integer sources get none."""
    (x,) = saved
    return (cast(dy, x.dtype) if is_floating(x.dtype) else None,)


def grad_constant(dy: Tensor, saved: tuple[Any, ...], attrs: dict[str, Any]) -> tuple[Any]:
    """The gradient of a kernel whose output does not change with its input: zero, lazily (so usually never
    built)."""
    return (lambda: zeros_like(dy),)
