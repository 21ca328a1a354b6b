"""Torch kernels: unary family."""

from __future__ import annotations

import torch
