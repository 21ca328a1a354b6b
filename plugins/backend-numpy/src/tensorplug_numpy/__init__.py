"""tensorplug-numpy: the "numpy" backend, kernels on numpy.ndarray on the CPU.

Installing it is enough: tensorplug discovers it through its entry point.
"""

__version__ = "0.1.0"
