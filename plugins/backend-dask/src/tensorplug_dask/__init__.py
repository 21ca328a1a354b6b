"""tensorplug-dask: the ``dask`` backend, whose tensors are lazy, chunked ``dask.array`` arrays.

Importing this package imports neither dask nor tensorplug's backends; the
plugin module (``tensorplug_dask.plugin``) only declares lazy names.
"""

__version__ = "0.1.0"
