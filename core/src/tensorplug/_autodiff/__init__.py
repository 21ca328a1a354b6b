"""Autodiff: the tape (``tp.grad`` and friends) and the backward pass.

``tensorplug.train``, ``tensorplug.losses`` and ``tensorplug.initializers``, public, belong to this layer too.

Imports: the runtime, the registries and plugin machinery, ops and gradients; nothing above (debug mode
checks gradients as an observer of the runtime, not through an import).
"""
