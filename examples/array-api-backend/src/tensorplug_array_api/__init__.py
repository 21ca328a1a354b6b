"""tensorplug-array-api: a tensorplug backend over any Python array-API namespace.

Install it and ``tp.set_backend("array_api")``; the namespace is
array_api_strict unless ``TENSORPLUG_ARRAY_API_NAMESPACE`` (or the
``namespace`` option of ``set_backend``) names another. Kernels the array API
standard has no function for run on the numpy backend (its fallback).
Importing this package imports neither the namespace nor array-api-compat.
"""

__version__ = "0.1.0"
