"""Which BLAS NumPy's matmul runs, as the bench reports it: the library and version NumPy was built with, the kernels
OpenBLAS chose for this CPU at run time, its thread count, and whether an environment variable forced older kernels
than the CPU supports (``OPENBLAS_CORETYPE=Haswell`` on an AVX-512 machine halves matmul's speed).

OpenBLAS is asked through its C API (``openblas_get_corename``, under the prefixes of the wheels that ship it), found
among the libraries the process has loaded; anything else (MKL, Accelerate) is named from NumPy's build information,
without the kernel it runs.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["OVERRIDES", "BlasInfo", "probe", "probe_without_overrides"]

OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
"""Environment variables that make OpenBLAS use other kernels than it would pick for the CPU."""

_PREFIXES = ("openblas_", "scipy_openblas_")
_SUFFIXES = ("", "64_")


@dataclass(frozen=True)
class BlasInfo:
    """NumPy's BLAS in this process."""

    library: str
    """``scipy-openblas 0.3.31``: the name and version NumPy was built with."""
    kernel: str | None = None
    """The kernels OpenBLAS runs on this CPU (``SkylakeX``, ``Haswell``), None when it cannot tell."""
    threads: int | None = None
    """OpenBLAS's thread count in this process."""
    overrides: dict[str, str] = field(default_factory=dict)
    """The variables of :data:`OVERRIDES` set in the environment, with their values."""

    def text(self, *, threads: bool = True) -> str:
        """``scipy-openblas 0.3.31, SkylakeX kernels, 1 thread`` (without the thread count: ``threads=False``)."""
        parts = [self.library]
        if self.kernel is not None:
            parts.append(f"{self.kernel} kernels")
        if threads and self.threads is not None:
            parts.append(f"{self.threads} thread{'s' if self.threads != 1 else ''}")
        if self.overrides:
            parts.append("set by " + ", ".join(f"{k}={v}" for k, v in self.overrides.items()))
        return ", ".join(parts)

    def warning(self, unforced: BlasInfo | None) -> str | None:
        """Why the rows may be slower than on a user's machine, when the overrides change the kernels OpenBLAS runs
        (``unforced`` is the probe of a process without them); None when they do not."""
        if not self.overrides or unforced is None or unforced.kernel is None or unforced.kernel == self.kernel:
            return None
        set_by = " ".join(f"{k}={v}" for k, v in self.overrides.items())
        unset = " ".join(f"-u {k}" for k in self.overrides)
        return (
            f"{set_by} makes OpenBLAS run its {self.kernel} kernels, where this CPU would run {unforced.kernel}: "
            f"matmul-bound rows are slower than on a machine without the override. To measure as a user's machine "
            f"runs, unset it: env {unset} tensorplug bench"
        )


def _library() -> str:
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    except Exception:  # the layout of numpy's build information is not a stable API
        return "unknown"
    return f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()


def _loaded_openblas() -> list[Path]:
    """The OpenBLAS libraries this process has loaded (Linux: from /proc/self/maps), else those beside NumPy."""
    found: list[Path] = []
    maps = Path("/proc/self/maps")
    if maps.exists():
        for line in maps.read_text().splitlines():
            path = line.rpartition(" ")[2]
            if "openblas" in Path(path).name.lower() and Path(path) not in found:
                found.append(Path(path))
    if not found:
        libs = Path(np.__file__).resolve().parent.parent / "numpy.libs"
        found = sorted(libs.glob("*openblas*")) if libs.is_dir() else []
    return found


def _call(library: ctypes.CDLL, name: str, restype: type) -> object | None:
    for prefix in _PREFIXES:
        for suffix in _SUFFIXES:
            function = getattr(library, f"{prefix}{name}{suffix}", None)
            if function is not None:
                function.restype = restype
                function.argtypes = []
                result: object = function()
                return result
    return None


def probe() -> BlasInfo:
    """NumPy's BLAS in this process (NumPy is imported, so its BLAS is loaded)."""
    overrides = {name: os.environ[name] for name in OVERRIDES if name in os.environ}
    kernel: str | None = None
    threads: int | None = None
    for path in _loaded_openblas():
        try:
            library = ctypes.CDLL(str(path))
        except OSError:
            continue
        corename = _call(library, "get_corename", ctypes.c_char_p)
        if isinstance(corename, bytes):
            kernel = corename.decode(errors="replace").strip() or None
            count = _call(library, "get_num_threads", ctypes.c_int)
            threads = count if isinstance(count, int) else None
            break
    return BlasInfo(_library(), kernel, threads, overrides)


def probe_without_overrides() -> BlasInfo | None:
    """What :func:`probe` says in a fresh interpreter without :data:`OVERRIDES` (None when it cannot be run)."""
    environ = {k: v for k, v in os.environ.items() if k not in OVERRIDES}
    code = (
        "import json; from tensorplug._tools._bench.blas import probe; i = probe(); "
        "print(json.dumps([i.library, i.kernel, i.threads]))"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=60)
        library, kernel, threads = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return BlasInfo(library, kernel, threads)
