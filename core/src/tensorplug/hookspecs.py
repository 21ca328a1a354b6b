"""The plugin hooks. A plugin is a module with ``@hookimpl`` functions, named by an entry point.

Each hook returns a list of declarations; the core owns the registries and
fills them, recording the plugin's distribution on every entry. A hook that
raises or returns anything else, or an ``@hookimpl`` whose name is not one of
these hooks, fails the whole plugin (see ``tensorplug._plugins._loading``). Declare in
``pyproject.toml``::

    [project.entry-points.tensorplug]
    mybackend = "mybackend.plugin"

and, in the plugin module, the version of the plugin contract it was written for (:data:`CONTRACT`)::

    TENSORPLUG_CONTRACT = "1.1"
"""

from __future__ import annotations

from collections.abc import Sequence

import pluggy

from tensorplug._runtime._registry import (
    BackendSpec,
    DecompositionSpec,
    ExporterSpec,
    GradientSet,
    GradientSpec,
    KernelSpec,
    TranslationSpec,
)

PROJECT = "tensorplug"

CONTRACT = "1.1"
"""The version of the plugin contract this tensorplug implements, ``major.minor``: the hooks, ``tensorplug.Backend``'s
methods and attributes, the spec types and the lowering contract. A minor version adds to the contract; a major one
changes or removes what a plugin may rely on, and the loader refuses a plugin written for another major version.
CHANGELOG.md's "Changes for backend authors" lists every change by version (1.0 was tensorplug 0.1.0's)."""

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def tensorplug_backends() -> Sequence[BackendSpec]:  # type: ignore[empty-body]
    """Declare backends: a name, a factory (lazy ``"module:attr"`` preferred) and a priority."""


@hookspec
def tensorplug_kernels() -> Sequence[KernelSpec]:  # type: ignore[empty-body]
    """Declare kernels for any backend, ideally as lazy ``"module:attr"`` references."""


@hookspec
def tensorplug_gradients() -> Sequence[GradientSpec]:  # type: ignore[empty-body]
    """Declare gradients; ``override=True`` marks an intended override of the core's."""


@hookspec
def tensorplug_gradient_sets() -> Sequence[GradientSet]:  # type: ignore[empty-body]
    """Declare named override sets, off until enabled with ``tp.use_gradients(name)``."""


@hookspec
def tensorplug_exporters() -> Sequence[ExporterSpec]:  # type: ignore[empty-body]
    """Declare export formats for ``tp.export``: a format name and its exporter (lazy ``"module:attr"`` preferred)."""


@hookspec
def tensorplug_decompositions() -> Sequence[DecompositionSpec]:  # type: ignore[empty-body]
    """Declare decompositions: how a kernel is computed with ops where a backend has no kernel of its own, and how
    it is differentiated where it has no gradient (added in contract 1.1)."""


@hookspec
def tensorplug_translations() -> Sequence[TranslationSpec]:  # type: ignore[empty-body]
    """Declare export translations: how an export format writes a kernel the plugin provides (lazy
    ``"module:attr"`` preferred, so that declaring one never imports the format's library; added in contract 1.1)."""
