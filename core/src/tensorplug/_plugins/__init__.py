"""The registries' filling: registration, gradient sets and overrides, and the plugin machinery.

``tp.register_kernel`` and friends, gradient sets and overrides, provenance (who registered what), entry
points, plugin discovery and loading with rollback (a plugin that fails leaves nothing half-registered),
the validation of what a plugin declares. ``tensorplug.hookspecs`` and ``tensorplug.kernel_factories``,
public modules, belong to this layer too.

Imports: the runtime (``tensorplug._runtime``), and this layer's public modules; nothing above.
"""
