"""Indexing ops: slicing, gathering, scattering, padding, tiling and splitting."""

from __future__ import annotations

__all__: list[str] = []
