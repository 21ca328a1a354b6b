"""The runtime, the core's lowest layer: what every kernel call runs on.

Errors, dtypes, per-thread state, Tensor and Variable (with their storage and printing), the Backend
interface, the kernel and gradient tables (``LayeredRegistry``), the ``Program`` data of a trace, the engine
that dispatches a kernel call, the observer hook, lazy-backend persistence.

Imports: nothing of tensorplug above it, and ``tensorplug.kernel_names``. The one exception is the tie of
Tensor and ops: ``_tensor`` and ``_variable`` import ``tensorplug.ops`` at their end (late imports, marked).
"""
