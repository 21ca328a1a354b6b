"""tensorplug-torch: the "torch" backend, kernels on torch.Tensor (CUDA when present, else CPU).

Installing it is enough: tensorplug discovers it through its entry point,
and torch itself is imported only when the backend is first initialised.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tensorplug_torch._graphs import GraphStatus, cuda_graph_status, reads_to_host
    from tensorplug_torch._threads import ThreadsWarning

__version__ = "0.1.0"
__all__ = ["GraphStatus", "ThreadsWarning", "cuda_graph_status", "reads_to_host"]

_GRAPHS = ("GraphStatus", "cuda_graph_status", "reads_to_host")


def __getattr__(name: str) -> Any:
    """The public names, imported on first use: ``ThreadsWarning``'s module brings pathlib, which ``import
    tensorplug`` (which imports this package to reach the plugin module) does not need (2-3 ms of a ~105 ms
    import, measured); the CUDA graphs' module imports torch."""
    if name == "ThreadsWarning":
        from tensorplug_torch._threads import ThreadsWarning

        return ThreadsWarning
    if name in _GRAPHS:
        from tensorplug_torch import _graphs

        return getattr(_graphs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
