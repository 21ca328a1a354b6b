"""The backend object: raw storage is an array of one array-API namespace (array_api_strict unless configured).

The namespace is found through array-api-compat, which hands back a
standard-conforming namespace for the libraries that are not one themselves
(``numpy`` gives ``array_api_compat.numpy``, ``torch`` gives
``array_api_compat.torch``). Kernels reach it as ``backend.xp``.
"""

from __future__ import annotations

import importlib
import math
import os
from types import ModuleType
from typing import Any

import array_api_compat
import numpy as np
from tensorplug import Backend, BackendError

ENV_NAMESPACE = "TENSORPLUG_ARRAY_API_NAMESPACE"
DEFAULT_NAMESPACE = "array_api_strict"
# The kernels use take_along_axis, cumulative_prod and Python scalars as function arguments: 2024.12 features.
MIN_API_VERSION = "2024.12"
DTYPE_NAMES = ("float32", "float64", "int32", "int64", "bool")
_ITEMSIZES = {"float32": 4, "float64": 8, "int32": 4, "int64": 8, "bool": 1}
# What a DLPack exchange raises when it cannot be done (another device, a library without DLPack, ...).
_NO_DLPACK = (TypeError, RuntimeError, BufferError, AttributeError, ValueError)


def load_namespace(namespace: str | ModuleType) -> ModuleType:
    """The array-API namespace of library ``namespace`` (a module or an importable module name)."""
    module = importlib.import_module(namespace) if isinstance(namespace, str) else namespace
    try:
        xp: ModuleType = array_api_compat.array_namespace(module.asarray(0))
    except (AttributeError, TypeError) as exc:
        raise BackendError(
            f"array_api backend: {getattr(module, '__name__', module)!r} is not an array library that "
            f"array-api-compat knows ({type(exc).__name__}: {exc}); set {ENV_NAMESPACE} to one, "
            "e.g. array_api_strict, numpy or torch"
        ) from exc
    return xp


class ArrayAPIBackend(Backend):
    """Tensors as arrays of one array-API namespace.

    ``namespace`` (a module or its name; default: ``$TENSORPLUG_ARRAY_API_NAMESPACE``,
    else ``array_api_strict``) picks the library; ``device`` is passed to
    its ``asarray`` (None: the library's default device).
    """

    name = "array_api"

    def __init__(self, namespace: str | ModuleType | None = None, device: Any = None) -> None:
        chosen = namespace or os.environ.get(ENV_NAMESPACE, "").strip() or DEFAULT_NAMESPACE
        try:
            self.xp = load_namespace(chosen)
        except ImportError as exc:
            raise BackendError(
                f"array_api backend: cannot import the namespace {chosen!r} ({exc}); install it "
                f"(pip install array-api-strict for the default) or set {ENV_NAMESPACE}"
            ) from exc
        self.namespace = self.xp.__name__
        version = str(getattr(self.xp, "__array_api_version__", "unknown"))
        if not version[:1].isdigit() or version < MIN_API_VERSION:
            raise BackendError(
                f"array_api backend: {self.namespace} implements version {version} of the array API standard; "
                f"its kernels need {MIN_API_VERSION} or later"
            )
        self.xp_device = device
        self.dtypes: dict[str, Any] = {name: getattr(self.xp, name) for name in DTYPE_NAMES}
        self.names: dict[Any, str] = {dtype: name for name, dtype in self.dtypes.items()}
        sample = self.xp.asarray(0, device=device)
        self.device = str(array_api_compat.device(sample))

    def from_host(self, array: np.ndarray) -> Any:
        return self.xp.asarray(array, device=self.xp_device)

    def to_host(self, raw: Any) -> np.ndarray:
        try:
            return np.from_dlpack(raw)  # zero-copy from CPU memory
        except _NO_DLPACK:
            return np.asarray(array_api_compat.to_device(raw, "cpu"))  # another device, or a numpy scalar

    def dtype_of(self, raw: Any) -> str:
        dtype = raw.dtype
        name = self.names.get(dtype)
        if name is None:
            # The standard promises dtypes that compare equal, not that they hash alike (numpy's scalar types
            # equal its dtype objects): look for an equal one once, and remember it.
            name = next((n for n, d in self.dtypes.items() if dtype == d), None)
            if name is None:
                raise BackendError(f"array_api backend: {self.namespace} dtype {dtype} is not one of tensorplug's")
            self.names[dtype] = name
        return name

    def shape_of(self, raw: Any) -> tuple[int, ...]:
        return tuple(raw.shape)

    def from_dlpack(self, obj: Any) -> Any:
        return self.xp.from_dlpack(obj)

    def move_from(self, raw: Any, source: Backend) -> Any:
        try:
            moved = self.xp.from_dlpack(source.dlpack_source(raw))  # zero-copy where the devices allow
        except _NO_DLPACK:
            return self.from_host(np.array(source.to_host(raw)))  # a copy through host memory
        if self.xp_device is not None:
            moved = array_api_compat.to_device(moved, self.xp_device)
        return moved

    def dlpack_source(self, raw: Any) -> Any:
        return raw if hasattr(raw, "__dlpack__") else np.asarray(raw)

    def nbytes(self, raw: Any) -> int:
        return int(math.prod(raw.shape)) * _ITEMSIZES[self.dtype_of(raw)]

    def __repr__(self) -> str:
        return f"<ArrayAPIBackend {self.name!r}: {self.namespace} on {self.device}>"
