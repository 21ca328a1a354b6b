"""Decide the backend's priority without importing torch (that would make `import tensorplug` slow).

Above numpy (priority 1) when a CUDA device will be used, below it on the
CPU: for the small tensors of typical CPU work, numpy's per-call overhead is
lower than torch's (see docs/performance.md), while on a GPU torch is the point.
"""

from __future__ import annotations

import os

ENV_DEVICE = "TENSORPLUG_TORCH_DEVICE"
CUDA_PRIORITY = 2
CPU_PRIORITY = 0


def cuda_present() -> bool:
    """An NVIDIA driver is there (its device files or its /proc entry); torch may still be a CPU build."""
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia/version")


def priority() -> int:
    """The torch backend's priority: the device it will pick decides (TENSORPLUG_TORCH_DEVICE first)."""
    device = os.environ.get(ENV_DEVICE, "").strip().lower()
    if device:
        return CUDA_PRIORITY if device.startswith("cuda") else CPU_PRIORITY
    return CUDA_PRIORITY if cuda_present() else CPU_PRIORITY
