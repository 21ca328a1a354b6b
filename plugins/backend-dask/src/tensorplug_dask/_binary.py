"""Elementwise binary kernels (inputs ``a``, ``b``, broadcasting): numpy's kernel mapped over each chunk."""

from __future__ import annotations

from functools import reduce
from typing import Any

import dask.array as da

from tensorplug_dask._factories import binary, chunkwise

add = binary("Add")
sub = binary("Sub")
multiply = binary("Multiply")
real_div = binary("RealDiv")
pow_ = binary("Pow")
maximum = binary("Maximum")
minimum = binary("Minimum")
squared_difference = binary("SquaredDifference")
atan2 = binary("Atan2")
floor_div = binary("FloorDiv")
mod = binary("Mod")
equal = binary("Equal")
not_equal = binary("NotEqual")
less = binary("Less")
less_equal = binary("LessEqual")
greater = binary("Greater")
greater_equal = binary("GreaterEqual")
logical_and = binary("LogicalAnd")
logical_or = binary("LogicalOr")
logical_xor = binary("LogicalXor")
prelu = chunkwise("Prelu", ("x", "alpha"))


def add_n(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """A sum of same-shape, same-dtype tensors: one elementwise task per chunk after blockwise fusion."""
    return reduce(da.add, inputs["tensors"])
