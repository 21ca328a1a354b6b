"""Torch kernels: nn family."""

from __future__ import annotations

import torch
