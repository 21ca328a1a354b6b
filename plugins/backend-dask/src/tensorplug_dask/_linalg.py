"""Linear-algebra kernels: dask's own chunked ``matmul`` and ``einsum``.

Both multiply blocks with numpy and add the partial products of the
contracted axis's chunks in a tree. dask adds integer partial products as
int64; the result is cast back to the inputs' dtype, which wraps as numpy's
int32 arithmetic does (the sum is exact modulo 2**32). Float results may
differ from the numpy backend's in the last bits: the chunks' partial sums
add in another order.
"""

# (dask.array has no type annotations)

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from tensorplug_dask._factories import as_dask


def batch_mat_mul(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """``a @ b`` over the last two axes, batch axes broadcast (as ``np.matmul``)."""
    a, b = as_dask(inputs["a"]), as_dask(inputs["b"])
    if attrs["transpose_a"]:
        a = da.swapaxes(a, -1, -2)
    if attrs["transpose_b"]:
        b = da.swapaxes(b, -1, -2)
    return da.matmul(a, b).astype(np.result_type(a.dtype, b.dtype))


def einsum(inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
    """Einstein summation of the operands; the op hands over an explicit equation ("ij,jk->ik")."""
    tensors = [as_dask(t) for t in inputs["tensors"]]
    # optimize=True: each block contracts in the order numpy's einsum_path picks for the whole shapes, as the
    # numpy kernel does.
    result = da.einsum(attrs["equation"], *tensors, optimize=True)
    return result.astype(np.result_type(*[t.dtype for t in tensors]))
