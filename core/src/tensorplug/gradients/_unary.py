"""Gradients of the elementwise unary kernels: one line each."""

from __future__ import annotations

from tensorplug import kernel_names as K
from tensorplug._registry import GradientSpec
from tensorplug.ops import cast, div, greater, mul, neg, square, sub

X = ("x",)
Y = (0,)

GRADIENTS = [
    GradientSpec(K.NEG, lambda dy, saved, attrs: (neg(dy),)),
    GradientSpec(K.EXP, lambda dy, saved, attrs: (mul(dy, saved[0]),), outputs_to_save=Y),
    GradientSpec(K.LOG, lambda dy, saved, attrs: (div(dy, saved[0]),), inputs_to_save=X),
    GradientSpec(K.SQRT, lambda dy, saved, attrs: (div(dy, mul(saved[0], 2.0)),), outputs_to_save=Y),
    GradientSpec(K.SQUARE, lambda dy, saved, attrs: (mul(dy, mul(saved[0], 2.0)),), inputs_to_save=X),
    GradientSpec(K.TANH, lambda dy, saved, attrs: (mul(dy, sub(1.0, square(saved[0]))),), outputs_to_save=Y),
    GradientSpec(K.SIGMOID, lambda dy, saved, attrs: (mul(dy, mul(saved[0], sub(1.0, saved[0]))),), outputs_to_save=Y),
    GradientSpec(K.RELU, lambda dy, saved, attrs: (mul(dy, cast(greater(saved[0], 0), dy.dtype)),), inputs_to_save=X),
    GradientSpec(K.IDENTITY, lambda dy, saved, attrs: (dy,)),
]
