"""Torch kernels: shape family."""

from __future__ import annotations

import torch
