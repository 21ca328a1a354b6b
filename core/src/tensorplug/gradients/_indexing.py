"""Gradients of the indexing kernels (slicing, gathering, scattering, padding, tiling, splitting)."""

from __future__ import annotations

from tensorplug._registry import GradientSpec

GRADIENTS: list[GradientSpec] = []
