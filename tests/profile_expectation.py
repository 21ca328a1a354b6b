"""The profile of a known computation, worked out by hand, shared by tests/unit/test_profile.py (numpy) and
tests/all/test_profile_torch.py (torch): both backends must run the same kernels with the same shapes, dtypes,
bytes and phases. ``assert_unobserved`` also serves the debug tests (tests/unit/test_debug.py and
tests/all/test_debug_torch.py)."""

from __future__ import annotations

import pkgutil

import tensorplug as tp
from tensorplug import kernel_names as K
from tensorplug._runtime._engine import engine
from tensorplug._runtime._observe import ObservedKernel
from tensorplug._runtime._state import state


def assert_unobserved(backend: str) -> None:
    """No observer, tape or backprop phase is left, and the dispatch tables (of ``backend``, the active one) hold the
    kernels themselves. Shared by the profile and debug tests of every backend."""
    assert engine.observing == 0
    assert state.observers is None
    assert state.tape is None
    assert state.gradient_of is None
    for table in engine.tables.values():
        assert not any(isinstance(fn, ObservedKernel) for fn in table.values())
    x = tp.tensor([1.0, 2.0])
    assert (x * x).tolist() == [1.0, 4.0]
    spec = tp.get_kernel(K.MULTIPLY, backend)
    assert spec is not None
    kernel = pkgutil.resolve_name(spec.kernel) if isinstance(spec.kernel, str) else spec.kernel
    assert engine.table[K.MULTIPLY] is kernel


def tanh_loss(x: tp.Tensor, w: tp.Tensor) -> tp.Tensor:
    return tp.sum(tp.tanh(x * w))


F3 = {"a": (3,), "b": (3,)}
F3_DTYPES = {"a": "float32", "b": "float32"}
# sum(tanh(x * w)) and its gradient with respect to x and w, both of shape (3,):
#   forward: Multiply, Tanh, Sum (to a 0-d tensor); then the seed of backprop, ones like the 0-d result.
#   Sum's gradient: the 0-d dy broadcast to (3,) (a full reduction needs no reshape first).
#   Tanh's gradient: dy * (1 - y**2): Square, Sub (1.0 is a 0-d tensor), Multiply.
#   Multiply's gradient: dy * w for x, then dy * x for w (no sum_to_shape kernel: the shapes already match).
EXPECTED = [
    # name, phase, input shapes, input dtypes, output shapes, new bytes
    ("Multiply", "forward", F3, F3_DTYPES, [(3,)], 12),
    ("Tanh", "forward", {"x": (3,)}, {"x": "float32"}, [(3,)], 12),
    ("Sum", "forward", {"x": (3,)}, {"x": "float32"}, [()], 4),
    ("OnesLike", "forward", {"x": ()}, {"x": "float32"}, [()], 4),
    ("BroadcastTo", "backward:Sum", {"x": ()}, {"x": "float32"}, [(3,)], 12),
    ("Square", "backward:Tanh", {"x": (3,)}, {"x": "float32"}, [(3,)], 12),
    ("Sub", "backward:Tanh", {"a": (), "b": (3,)}, F3_DTYPES, [(3,)], 12),
    ("Multiply", "backward:Tanh", F3, F3_DTYPES, [(3,)], 12),
    ("Multiply", "backward:Multiply", F3, F3_DTYPES, [(3,)], 12),
    ("Multiply", "backward:Multiply", F3, F3_DTYPES, [(3,)], 12),
]
