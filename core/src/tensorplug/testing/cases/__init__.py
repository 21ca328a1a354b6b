"""The conformance tables, one module per kernel family; ``CASES`` joins them."""

from __future__ import annotations

import dataclasses

from tensorplug.testing._case import Case
from tensorplug.testing.cases import (
    _binary,
    _binary_exact,
    _composite,
    _indexing,
    _kinks,
    _linalg,
    _nn,
    _random,
    _reduction,
    _shape,
    _unary,
)

# The dtypes some cases' ops use beyond their inputs' and expected values' (Case.dtypes): a dtype argument, the masks
# and indices inside a gradient. With them the suite knows what a backend must store to run each case;
# tests/unit/test_conformance.py checks this table on numpy.
EXTRA_DTYPES: dict[str, tuple[str, ...]] = {
    **{f"Range-{name}": ("float64",) for name in ("linspace", "linspace-down", "linspace-endpoints")},
    "RandomUniform-range-float64": ("float64",),
    "RandomNormal-mean-stddev-float64": ("float64",),
    **{
        case_id: ("bool",)
        for case_id in (
            "Max-grad-ties",
            "Min-grad-ties",
            "Select-grad",
            "log_sum_exp-values",
            "log_sum_exp-keepdims-grad",
            "dropout-rate-half",
        )
    },
    "Cumprod-grad-value-zero": ("bool", "int32"),
    "softmax_cross_entropy-weights": ("bool", "int32"),
    **{
        case_id: ("int32",)
        for case_id in (
            "GatherV2-grad-duplicates",
            "GatherV2-grad-batch-dims",
            "GatherNd-grad",
            "ScatterNd-grad",
            "UnsortedSegmentSum-grad",
            "TopK-grad",
            "RandomUniform-int32",
        )
    },
    "RandomUniform-int64": ("int64",),
    **{
        f"RandomUniform-{name}": ("float32",)
        for name in ("default", "empty-range", "seeded", "unseeded", "empty", "scalar")
    },
    **{
        f"RandomNormal-{name}": ("float32",)
        for name in ("default", "zero-stddev", "seeded", "unseeded", "empty", "scalar")
    },
    "moving_average-grad": ("float32",),
}


def _with_dtypes(case: Case) -> Case:
    extra = EXTRA_DTYPES.get(case.id)
    return case if extra is None else dataclasses.replace(case, dtypes=extra)


CASES: list[Case] = [
    _with_dtypes(case)
    for case in [
        *_unary.CASES,
        *_binary.CASES,
        *_binary_exact.CASES,
        *_kinks.CASES,
        *_reduction.CASES,
        *_linalg.CASES,
        *_shape.CASES,
        *_indexing.CASES,
        *_nn.CASES,
        *_random.CASES,
        *_composite.CASES,
    ]
]
