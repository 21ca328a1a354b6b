"""tensorplug-grads-extra: gradient overrides for tensorplug, discovered through its entry point.

Installing it is enough: safe gradients at singularities (Sqrt, Pow, Log,
RealDiv) and a FloorDiv gradient apply to every program, and the named sets
``straight_through``, ``guided_backprop``, ``sigmoid_surrogate`` and
``clip`` can be enabled with ``tp.use_gradients``. See the README.
"""

__version__ = "0.1.0"
