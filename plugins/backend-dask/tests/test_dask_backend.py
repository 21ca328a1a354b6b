"""The dask backend as a whole: nothing computes until read, persist per step, debug mode, moves, options, coverage."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
import textwrap
from typing import Any

import dask.array as da
import numpy as np
import pytest
from lazy_guard import ComputedError, no_compute

import tensorplug as tp
from tensorplug.testing import Case, all_cases
from tensorplug.testing._conformance import _to_tensors


def _float_sum(out: Any) -> tp.Tensor:
    outs = out if isinstance(out, list | tuple) else [out]
    total: Any = None
    for o in outs:
        if isinstance(o, tp.Tensor) and o.dtype in ("float32", "float64"):
            s = tp.sum(tp.cast(o, "float64"))
            total = s if total is None else total + s
    assert total is not None
    return total


LAZY_CASES = [c for c in all_cases() if c.raises is None]


@pytest.mark.parametrize("case", LAZY_CASES, ids=[c.id for c in LAZY_CASES])
def test_ops_and_gradients_build_graphs_without_computing(case: Case) -> None:
    """Every conformance case's op (and for gradient cases, its gradient) runs with a scheduler that refuses work."""
    with no_compute():
        inputs = [_to_tensors(v) for v in case.inputs]  # as the conformance runner makes them
        out = case.op(*inputs)
        if case.grad:
            positions = [
                i for i, v in enumerate(inputs) if isinstance(v, tp.Tensor) and v.dtype in ("float32", "float64")
            ]

            def f(*xs: tp.Tensor) -> tp.Tensor:
                args = list(inputs)
                for i, x in zip(positions, xs, strict=True):
                    args[i] = x
                return _float_sum(case.op(*args))

            grads = tp.grads(f)([inputs[i] for i in positions])
            assert all(isinstance(g._data, da.Array) for g in grads)
    outs = out if isinstance(out, list | tuple) else [out]
    assert all(isinstance(o._data, da.Array) for o in outs if isinstance(o, tp.Tensor))


def test_the_refusing_scheduler_does_refuse() -> None:
    x = tp.tensor(np.arange(6.0))
    with no_compute(), pytest.raises(ComputedError):
        x.numpy()


def test_chunks_span_the_arrays_of_these_tests() -> None:
    x = tp.tensor(np.arange(10.0, dtype=np.float32))
    assert x._data.chunks == ((2, 2, 2, 2, 2),)
    assert (tp.tanh(x) * 2.0)._data.numblocks == (5,)


# -- persist: one step's graph is computed once, and the next starts from its results --------------------------------


def _regression(rows: int = 40, features: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features)).astype(np.float32)
    y = (x @ rng.standard_normal((features, 1)) + 0.5).astype(np.float32)
    return x, y


def _train(backend: str, steps: int, traced: bool = False, optimizer: str = "SGD") -> tuple[list[float], Any, Any]:
    tp.set_backend(backend)
    x_host, y_host = _regression()
    x, y = tp.tensor(x_host), tp.tensor(y_host)
    w = tp.variable(np.zeros((3, 1), np.float32))
    b = tp.variable(np.zeros((1,), np.float32))
    opt = tp.train.SGD(0.1) if optimizer == "SGD" else tp.train.Adam(0.05)

    def step(x: tp.Tensor, y: tp.Tensor) -> tp.Tensor:
        return opt.minimize(lambda: tp.mean(tp.square(tp.matmul(x, w) + b - y)), [w, b])

    run = tp.function(step) if traced else step
    losses = []
    for _ in range(steps):
        loss = run(x, y)
        if backend == "dask":  # each step's new values are persisted: graphs of one task per chunk
            for t in (w, b, loss):
                assert len(t._data.__dask_graph__()) == t._data.npartitions
        losses.append(loss)
    return [float(v.item()) for v in losses], w, b


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "tp.function"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_training_persists_each_step_and_matches_numpy(traced: bool, optimizer: str) -> None:
    losses, w, _ = _train("dask", 6, traced, optimizer)
    want, w_numpy, _ = _train("numpy", 6, traced, optimizer)
    np.testing.assert_allclose(losses, want, rtol=1e-5)
    np.testing.assert_allclose(w.numpy(), w_numpy.numpy(), rtol=1e-5, atol=1e-6)
    assert losses[-1] < losses[0] / 2


def test_without_persist_the_graph_keeps_every_step() -> None:
    tp.set_backend("dask", chunks=2, persist=False)
    try:
        _, w, _ = _train_lazy()
        assert len(w._data.__dask_graph__()) > 10 * w._data.npartitions
    finally:
        tp.set_backend("dask", chunks=2)


def _train_lazy() -> tuple[list[float], Any, Any]:
    x_host, y_host = _regression()
    x, y = tp.tensor(x_host), tp.tensor(y_host)
    w = tp.variable(np.zeros((3, 1), np.float32))
    opt = tp.train.SGD(0.1)
    with no_compute():  # persist=False: nothing runs until read
        for _ in range(4):
            opt.minimize(lambda: tp.mean(tp.square(tp.matmul(x, w) - y)), [w])
    return [], w, None


def test_tp_persist_computes_once_and_keeps_the_result() -> None:
    x = tp.tensor(np.arange(8.0))
    y = tp.exp(x) * 2.0 + 1.0
    assert len(y._data.__dask_graph__()) > y._data.npartitions
    tp.persist(y)
    assert len(y._data.__dask_graph__()) == y._data.npartitions
    with no_compute(), pytest.raises(ComputedError):
        tp.persist(tp.exp(y))  # persisting is computing
    np.testing.assert_allclose(y.numpy(), np.exp(np.arange(8.0)) * 2.0 + 1.0)
    with pytest.raises(TypeError, match="expected Tensors"):
        tp.persist(np.ones(2))  # type: ignore[arg-type]


# -- debug mode: the check is part of the graph ------------------------------------------------------------------------


def test_debug_mode_checks_when_values_are_computed_and_names_the_kernel_that_made_nan() -> None:
    x = tp.tensor(np.array([4.0, 1.0, -1.0, 2.0, 3.0], np.float32))
    with tp.debug(), no_compute():
        y = tp.sqrt(x) * 2.0 + 1.0  # no value exists yet: nothing raises, nothing computes
    with pytest.raises(tp.NonFiniteError) as caught:
        y.numpy()
    message = str(caught.value)
    for part in ("kernel 'Sqrt'", "lazy backend 'dask'", "x=float32[5]", "1 NaN", "index (2,)"):
        assert part in message
    with tp.debug():
        fine = tp.sqrt(tp.abs(x)) * 2.0
    np.testing.assert_allclose(fine.numpy(), np.sqrt(np.abs(x.numpy())) * 2.0)


def test_debug_mode_checks_gradients_on_dask_too() -> None:
    x = tp.tensor(np.array([0.0, 1.0], np.float32))
    with tp.debug():
        g = tp.grad(lambda t: tp.sum(tp.sqrt(t)))(x)  # d sqrt(t) at 0 is inf
    with pytest.raises(tp.NonFiniteError, match="gradient of 'Sqrt'"):
        g.numpy()


# -- moving data ------------------------------------------------------------------------------------------------------


def test_moves_between_numpy_and_dask_both_ways() -> None:
    host = np.arange(12.0, dtype=np.float32).reshape(4, 3)
    tp.set_backend("numpy")
    on_numpy = tp.tensor(host)
    tp.set_backend("dask")
    with no_compute():
        on_dask = on_numpy.to_backend("dask")  # numpy -> dask: no computation
        doubled = on_dask * 2.0
        also = tp.tensor(on_numpy)  # tp.tensor of another backend's tensor moves it too
    assert on_dask.backend == also.backend == "dask"
    assert isinstance(on_dask._data, da.Array)
    back = doubled.to_backend("numpy")  # dask -> numpy computes, as reading does
    assert back.backend == "numpy"
    np.testing.assert_array_equal(back.numpy(), host * 2.0)
    on_numpy._data[0, 0] = 100.0  # the dask tensor holds a copy, not a view of the numpy tensor's storage
    assert on_dask.numpy()[0, 0] == 0.0


def test_a_numpy_tensor_in_a_dask_op_moves_lazily() -> None:
    tp.set_backend("numpy")
    a = tp.tensor(np.ones(3, np.float32))
    tp.set_backend("dask")
    b = tp.tensor(np.full(3, 2.0, np.float32))
    with no_compute():
        c = a + b  # the numpy operand moves to the active backend
    assert c.backend == "dask"
    np.testing.assert_array_equal(c.numpy(), [3.0, 3.0, 3.0])


# -- options ---------------------------------------------------------------------------------------------------------


def test_chunks_options() -> None:
    from tensorplug_dask._backend import DaskBackend

    rows = DaskBackend(chunks={0: 3})
    assert rows.from_host(np.zeros((7, 4))).chunks == ((3, 3, 1), (4,))
    assert rows.from_host(np.zeros(())).shape == ()
    tuple_chunks = DaskBackend(chunks=(2, 4))
    assert tuple_chunks.from_host(np.zeros((4, 4))).chunks == ((2, 2), (4,))
    assert tuple_chunks.from_host(np.zeros(5)).chunks == ((5,),)  # another rank: "auto"
    with pytest.raises(tp.BackendError, match=r"dask\.distributed\.Client"):
        DaskBackend(client=object())


def test_coverage_reports_the_per_chunk_kernels() -> None:
    from tensorplug_dask.plugin import PER_CHUNK, PER_CHUNK_NOTE

    listing = tp.coverage()
    assert listing.missing_for("dask") == []
    assert set(listing.noted_for("dask", PER_CHUNK_NOTE)) == set(PER_CHUNK)
    assert "(per-chunk)" in listing.table()
    for spec in tp.kernels_for_backend("dask"):  # the note says what the code does
        fn = pkgutil.resolve_name(spec.kernel) if isinstance(spec.kernel, str) else spec.kernel
        assert bool(getattr(fn, "per_chunk", False)) == (spec.kernel_name in PER_CHUNK), spec.kernel_name


def test_importing_tensorplug_does_not_import_dask() -> None:
    code = textwrap.dedent(
        """
        import sys
        import tensorplug as tp
        assert "dask" in tp.list_backends()
        assert not any(m == "dask" or m.startswith("dask.") for m in sys.modules), "dask imported"
        tp.set_backend("dask")
        assert "dask.array" in sys.modules
        print("ok")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_the_dask_guide_block_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/dask.md's python block is guarded (the tests session has no dask): run it here, where it does run."""
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[3] / "docs" / "dask.md").read_text()  # the repository's
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", guide, flags=re.DOTALL) if 'set_backend("dask"' in b]
    try:
        exec(compile(block, "docs/dask.md", "exec"), {"tp": tp})
    finally:
        tp.set_backend("dask", chunks=2)
    assert capsys.readouterr().out == "91.0\n"


def test_tensorplug_bench_leaves_out_lazy_backends_unless_named() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tensorplug", "bench", "--quick", "--json"], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    import json

    data = json.loads(done.stdout)
    assert "benchmarks/dask_regression.py" in data["skipped"]["dask"]
    measured = {row["backend"] for row in data["rows"]}
    assert "numpy" in measured
    assert "dask" not in measured


def test_the_install_hint_for_distributed_is_the_one_the_core_gives_for_this_plugin() -> None:
    from tensorplug_dask._backend import INSTALL_DISTRIBUTED

    from tensorplug._runtime._install import pip_install

    assert pip_install("tensorplug-dask", "distributed") == INSTALL_DISTRIBUTED
