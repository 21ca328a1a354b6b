"""The plugin module named by the ``tensorplug`` entry point: always-on gradients and named override sets.

Precedence: plugins load after the core's built-in plugin, so these
gradients shadow the core's; ``override=True`` says that is intended (no
warning). Gradient functions and set factories are named lazily
(``module:attr``), so discovery imports only this module and tensorplug.
"""

from __future__ import annotations

from tensorplug import GradientSet, GradientSpec, hookimpl
from tensorplug import kernel_names as K

TENSORPLUG_CONTRACT = "1.1"  # the version of tensorplug's plugin contract this plugin is written for

_SAFE = "tensorplug_grads_extra._safe"
_SETS = "tensorplug_grads_extra._sets"
AB = ("a", "b")

# Always on. Safe versions of the core's gradients (they differ only where the core's are NaN or inf), then additions.
GRADIENTS = [
    GradientSpec(K.SQRT, f"{_SAFE}:grad_sqrt", outputs_to_save=(0,), override=True),
    GradientSpec(K.POW, f"{_SAFE}:grad_pow", inputs_to_save=AB, outputs_to_save=(0,), override=True),
    GradientSpec(K.LOG, f"{_SAFE}:grad_log", inputs_to_save=("x",), override=True),
    GradientSpec(K.REAL_DIV, f"{_SAFE}:grad_real_div", inputs_to_save=AB, override=True),
    # The core declares FloorDiv not differentiable: straight through, as a / b.
    GradientSpec(K.FLOOR_DIV, f"{_SAFE}:grad_floor_div", inputs_to_save=AB, override=True),
]

# Off until enabled: with tp.use_gradients(name, **params): ...
GRADIENT_SETS = [
    GradientSet(
        "straight_through",
        f"{_SETS}:straight_through",
        "identity gradients for Round, Floor, Ceil and Sign; the hard-tanh estimator (dy where |x| <= 1) for Step",
    ),
    GradientSet(
        "guided_backprop",
        f"{_SETS}:guided_backprop",
        "Relu passes only positive gradients, and only where its input was positive",
    ),
    GradientSet(
        "sigmoid_surrogate",
        f"{_SETS}:sigmoid_surrogate",
        "Step and Sign differentiated as sigmoid(slope * x) scaled to their jump; params: slope=5.0",
    ),
    GradientSet(
        "clip",
        f"{_SETS}:clip",
        "gradients of the chosen kernels (default: all) clipped elementwise; params: min, max, kernels=None",
    ),
]


@hookimpl
def tensorplug_gradients() -> list[GradientSpec]:
    """The always-on gradients, each shadowing the core's on purpose."""
    return list(GRADIENTS)


@hookimpl
def tensorplug_gradient_sets() -> list[GradientSet]:
    """The named sets, for tp.use_gradients."""
    return list(GRADIENT_SETS)
