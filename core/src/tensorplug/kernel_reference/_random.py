"""Random kernels."""

from __future__ import annotations

from tensorplug.kernel_reference._entries import Attr, KernelEntry, Note, Output
from tensorplug.kernel_reference._shape import _SHAPE_ATTR

_SEED = Attr("seed", "int | None", "a non-negative seed: the same seed gives the same values on one backend; None "
             "draws fresh values (the ops draw seeded samples on the host, the same on every backend, and call "
             "the kernel only unseeded)", form=None)  # fmt: skip

ENTRIES = [
    KernelEntry(
        name="RandomUniform", family="random", summary="samples from the uniform distribution on [minval, maxval)",
        ops=("tp.random_uniform",), inputs=(),
        attrs=(_SHAPE_ATTR, Attr("minval", "int | float", "finite; an int for integer dtypes"),
               Attr("maxval", "int | float", "finite, >= minval (> for integer dtypes, within the dtype's range)"),
               Attr("dtype", "str", "float32, float64, int32 or int64", form="dtype"), _SEED),
        outputs=(Output("attr:dtype", doc="shape"),), dtypes="no inputs; y has the dtype attr", gradient="none",
        notes=(Note("integer dtypes draw integers in [minval, maxval)", ("int32", "int64")),
               Note("minval == maxval gives that value", ("empty-range",)),
               Note("values differ between backends; the conformance suite checks statistics, not values",
                    ("default", "seeded", "unseeded"))),
    ),
    KernelEntry(
        name="RandomNormal", family="random", summary="samples from the normal distribution",
        ops=("tp.random_normal",),
        inputs=(),
        attrs=(_SHAPE_ATTR, Attr("mean", "float", "finite"), Attr("stddev", "float", "finite, >= 0"),
               Attr("dtype", "str", "float32 or float64", form="dtype"), _SEED),
        outputs=(Output("attr:dtype", doc="shape"),), dtypes="no inputs; y has the dtype attr (a float)",
        gradient="none",
        notes=(Note("stddev 0 gives mean everywhere", ("zero-stddev",)),
               Note("values differ between backends; the conformance suite checks statistics, not values",
                    ("default", "seeded", "unseeded"))),
    ),
]  # fmt: skip
