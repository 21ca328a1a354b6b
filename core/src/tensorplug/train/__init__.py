"""Optimizers, as TensorFlow.js's ``tf.train``: SGD, Momentum, Adam, RMSProp and Adagrad.

``minimize(loss_fn, var_list=None)`` computes the loss and its gradients
with :func:`tensorplug.variable_grads` (every trainable float variable by
default), applies them and returns the loss; ``apply_gradients(grads)``
applies gradients computed elsewhere. Updates are written with ops, so they
run on whichever backend is active, and assign each variable its new value;
a backend may offer each update as one fused call (``Backend.fused_update``
for the names in ``FUSED_UPDATES``: ``APPLY_ADAM``..., each a
:class:`FusedUpdateSpec` whose ``help()`` gives the inputs, attrs and outputs
of its function), which eager steps use when no trace or observer is on and
the ops' kernels are the backend's own.

An optimizer keeps its state (its "slots", e.g. Adam's moment estimates) per
Variable object, created with zeros at the variable's first update, and
forgets a variable's state when the variable is collected.

A step that raises (a kernel's error, a NaN found by ``tp.debug``) changes nothing: the variables, the
slots and ``iterations`` are left as they were, in an eager step as in a ``tp.function`` replay. The
hyper-parameters (``learning_rate``, ``momentum``, ``beta1``...) are read at each step, so they may be
changed between steps (a learning-rate schedule), eagerly and in ``tp.function`` replays alike.

``state()`` gives an optimizer's whole state (iterations, hyper-parameters, slots) as one value and
``load_state(state)`` takes it back, checked first; ``tp.save`` / ``tp.restore`` keep it in a checkpoint beside
the model (see docs/checkpoints.md).

Where this differs from TensorFlow.js: state is kept per Variable (TensorFlow.js
keeps it by position in the gradient map, so a map with other variables mixes
their states up); ``apply_gradients`` checks every entry before it changes
anything, and refuses unknown names; ``minimize`` always returns the loss;
Adam's bias corrections are computed on the host in float64 (TensorFlow.js
keeps ``beta**t`` in float32 variables); centered RMSProp adds epsilon where
TensorFlow.js subtracts it (see :class:`RMSProp`).

>>> import tensorplug as tp
>>> w = tp.variable([3.0, -2.0], name="train_doc_w")
>>> target = tp.tensor([1.0, 2.0])
>>> opt = tp.train.SGD(0.25)
>>> for _ in range(20):
...     loss = opt.minimize(lambda: tp.sum(tp.square(w - target)), [w])
>>> [round(x, 4) for x in w.tolist()], opt.iterations
([1.0, 2.0], 20)
"""

from __future__ import annotations

from tensorplug.train._adaptive import Adagrad, Adam, RMSProp
from tensorplug.train._descent import SGD, Momentum
from tensorplug.train._fused import (
    APPLY_ADAGRAD,
    APPLY_ADAM,
    APPLY_GRADIENT_DESCENT,
    APPLY_MOMENTUM,
    APPLY_RMS_PROP,
    FUSED_UPDATES,
    FusedUpdateSpec,
)
from tensorplug.train._optimizer import Optimizer, OptimizerError
from tensorplug.train._state import OptimizerState

__all__ = [
    "APPLY_ADAGRAD",
    "APPLY_ADAM",
    "APPLY_GRADIENT_DESCENT",
    "APPLY_MOMENTUM",
    "APPLY_RMS_PROP",
    "FUSED_UPDATES",
    "SGD",
    "Adagrad",
    "Adam",
    "FusedUpdateSpec",
    "Momentum",
    "Optimizer",
    "OptimizerError",
    "OptimizerState",
    "RMSProp",
]

# The classes are defined in submodules but belong to tensorplug.train: their names in reprs, pickles and the
# docs stay tp.train.SGD and so on, as when the optimizers were one module.
for _public in (SGD, Adagrad, Adam, FusedUpdateSpec, Momentum, Optimizer, OptimizerError, OptimizerState, RMSProp):
    _public.__module__ = __name__
del _public
