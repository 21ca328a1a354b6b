"""Torch kernels: binary family."""

from __future__ import annotations

import torch
