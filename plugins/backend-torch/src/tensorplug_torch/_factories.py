"""Kernel factories for the torch kernel modules (the generic ones come from the core)."""

from __future__ import annotations

from tensorplug.kernel_factories import Kernel as Kernel
from tensorplug.kernel_factories import binary as binary
from tensorplug.kernel_factories import unary as unary
