"""Torch kernels: linalg family."""

from __future__ import annotations

import torch
