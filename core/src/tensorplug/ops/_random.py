"""Random ops: uniform and normal samples from a seed."""

from __future__ import annotations

__all__: list[str] = []
