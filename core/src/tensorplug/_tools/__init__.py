"""Tools: the command line (``python -m tensorplug``, ``tensorplug``), ``tp.info``, the demo, the backend
scaffold (``tensorplug new-backend``) and the benchmarks (``tensorplug bench``).

``tensorplug.testing``, ``tensorplug.datasets`` and the package's public face (``tensorplug/__init__.py``),
public, belong to this layer too.

Imports: any layer.
"""
