"""Inspection: tools that watch the layers below through observers and change nothing there.

``tp.profile`` and ``tp.time``, ``tp.debug``, ``tp.coverage``, ``tp.memory``.

Imports: every layer below (up to tracing); nothing above.
"""
