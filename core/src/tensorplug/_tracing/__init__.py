"""Tracing: ``tp.function``, from the trace of a call to the replay of its program.

The ``tp.function`` API and its cache, the tracer (an observer of the traced thread), the program passes,
the generated replay, the call signature.

Imports: every layer below (runtime, registries and plugins, ops and gradients, autodiff and training);
nothing above.
"""
