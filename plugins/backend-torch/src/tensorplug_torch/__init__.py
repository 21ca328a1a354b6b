"""tensorplug-torch: the "torch" backend, kernels on torch.Tensor (CUDA when present, else CPU).

Installing it is enough: tensorplug discovers it through its entry point,
and torch itself is imported only when the backend is first initialised.
"""

from tensorplug_torch._threads import ThreadsWarning

__version__ = "0.1.0"
__all__ = ["ThreadsWarning"]
