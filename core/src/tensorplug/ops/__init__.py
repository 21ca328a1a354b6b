"""Ops: the user-facing, backend-agnostic functions. Each validates, then dispatches kernels.

One module per family; each lists its public ops in ``__all__``, re-exported here.
What the families share: ``_convert`` makes tensors (``tp.tensor``, ``tp.cast``, ``tp.from_dlpack``;
DLPack producers in ``_dlpack``), ``_promote`` promotes operands, ``_shapes`` broadcasts and normalises axes
and shapes, ``_args`` checks attrs and input dtypes.
"""

from tensorplug.ops import (
    _binary,
    _composite,
    _convert,
    _indexing,
    _linalg,
    _nn,
    _random,
    _reduction,
    _shape,
    _tensor_methods,
    _unary,
)
from tensorplug.ops._binary import *  # noqa: F403
from tensorplug.ops._composite import *  # noqa: F403
from tensorplug.ops._convert import *  # noqa: F403
from tensorplug.ops._indexing import *  # noqa: F403
from tensorplug.ops._linalg import *  # noqa: F403
from tensorplug.ops._nn import *  # noqa: F403
from tensorplug.ops._random import *  # noqa: F403
from tensorplug.ops._reduction import *  # noqa: F403
from tensorplug.ops._shape import *  # noqa: F403
from tensorplug.ops._unary import *  # noqa: F403

__all__: list[str] = []
__all__ += _convert.__all__
__all__ += _unary.__all__
__all__ += _binary.__all__
__all__ += _reduction.__all__
__all__ += _linalg.__all__
__all__ += _shape.__all__
__all__ += _indexing.__all__
__all__ += _nn.__all__
__all__ += _random.__all__
__all__ += _composite.__all__

_tensor_methods.attach()  # Tensor's operators and methods are ops: they exist once the ops do
