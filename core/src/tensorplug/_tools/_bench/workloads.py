"""The workloads through tensorplug on one backend, each timed beside its reference; the rows they yield.

The workloads: a 1-element ``run_kernel`` Add without and with a recording
tape, the ``+`` operator, the gradient of sum(tanh(x*w+b)) for 1-element
tensors, one SGD step of a small and of a big MLP (with ``tp.variable_grads``
and ``Variable.assign``, then with ``tp.train.SGD(...).minimize``), and the
whole-process time of ``import tensorplug``; then the gradient and the two
SGD steps again through ``tp.function`` (traced once, then replayed); last,
one Adam step of a small CNN (see ``cnn``), eager and traced. Before any
timing, each is checked to compute what its reference computes.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass

import numpy as np

import tensorplug as tp
from tensorplug._autodiff._backward import _Scope
from tensorplug._runtime._backend import Backend
from tensorplug._runtime._engine import dispatch as run_one_output
from tensorplug._runtime._engine import engine
from tensorplug._runtime._errors import TensorplugError
from tensorplug._tools._bench.cnn import CNN, TensorplugCNN, make_cnn_problem
from tensorplug._tools._bench.references import (
    AutogradMLP,
    JaxMLP,
    MLPProblem,
    MLPStep,
    NumpyReference,
    Reference,
    autograd_small_grad,
    jax_small_grad,
    make_problem,
    one_element,
    reference_for,
    synced,
)
from tensorplug._tools._bench.timing import Settings, Workload, compare, compare_processes

RECORDS_PER_SCOPE = 1000  # kernel calls recorded per gradient scope in the recording workload

DISPATCH = "run_kernel Add, 1 element, no tape"
RECORDING = "run_kernel Add, 1 element, recording"
OPERATOR = "a + b operator, 1 element, no tape"
SMALL_GRAD = "grad of sum(tanh(x*w+b)), 1 element"
SMALL_MLP = "MLP 64-32-10 batch 32, SGD step"
BIG_MLP = "MLP 784-256-256-10 batch 128, SGD step"
IMPORT = "python -c 'import tensorplug' (whole process)"
MLPS = {SMALL_MLP: ([64, 32, 10], 32), BIG_MLP: ([784, 256, 256, 10], 128)}
TRACED = ", tp.function"  # the same workload traced once, then replayed
SMALL_GRAD_TRACED = SMALL_GRAD + TRACED
SMALL_MLP_TRACED = SMALL_MLP + TRACED
BIG_MLP_TRACED = BIG_MLP + TRACED
MINIMIZE = ", optimizer minimize"  # the same step through tp.train.SGD(rate).minimize(loss, variables)
SMALL_MLP_MINIMIZE = SMALL_MLP + MINIMIZE
BIG_MLP_MINIMIZE = BIG_MLP + MINIMIZE
CNN_TRACED = CNN + TRACED

# The references, as the rows name them.
HAND = "NumPy by hand"
RAW_TORCH = "raw PyTorch eager"
TORCH_GRAD = "torch.autograd.grad"
TORCH_PLUS = "torch.Tensor +"
JIT = "jax.jit"  # the numpy backend's traced steps against JAX's compiled ones, from JAX's process of the run

# The targets: the largest ratio tensorplug / reference each (backend, workload, reference) may have; the other
# rows are shown only. The numpy backend's rows against raw PyTorch compare it with the torch backend's
# reference, timed in the torch backend's process of the same run (see cross_rows).
TARGETS: dict[tuple[str | None, str, str], float] = {
    ("numpy", DISPATCH, "np.add"): 3.0,
    ("numpy", RECORDING, "np.add"): 5.0,
    ("numpy", OPERATOR, TORCH_PLUS): 1.0,
    ("numpy", SMALL_GRAD, HAND): 10.0,
    ("numpy", SMALL_GRAD, TORCH_GRAD): 1.0,
    ("numpy", SMALL_MLP, HAND): 4.0,
    ("numpy", SMALL_MLP, RAW_TORCH): 1.25,
    ("numpy", BIG_MLP, HAND): 1.10,
    ("numpy", SMALL_MLP_MINIMIZE, HAND): 4.0,  # minimize: the targets of the step it takes
    ("numpy", BIG_MLP_MINIMIZE, HAND): 1.10,
    ("numpy", SMALL_GRAD_TRACED, HAND): 1.10,
    ("numpy", SMALL_MLP_TRACED, HAND): 1.10,
    ("numpy", BIG_MLP_TRACED, HAND): 0.92,  # by fusing: XLA reaches 0.87-0.94
    ("numpy", BIG_MLP_TRACED, JIT): 1.0,
    # torch: on the CPU, and on CUDA when there is one
    ("torch", SMALL_GRAD, TORCH_GRAD): 1.10,
    ("torch", SMALL_MLP, RAW_TORCH): 1.30,
    ("torch", BIG_MLP, RAW_TORCH): 1.10,
    ("torch", SMALL_MLP_MINIMIZE, RAW_TORCH): 1.30,
    ("torch", BIG_MLP_MINIMIZE, RAW_TORCH): 1.10,
    ("torch", BIG_MLP_TRACED, RAW_TORCH): 1.05,
    ("torch", CNN, RAW_TORCH): 1.30,
    ("torch", CNN_TRACED, RAW_TORCH): 1.05,
    ("numpy", CNN, RAW_TORCH): 1.30,
    ("numpy", CNN_TRACED, RAW_TORCH): 1.30,
    (None, IMPORT, "import numpy, pluggy"): 1.25,
}
# The numpy backend's rows also measured against the torch backend's reference for the same workload.
CROSS_WORKLOADS = (OPERATOR, SMALL_GRAD, SMALL_MLP, BIG_MLP, CNN, CNN_TRACED)


# A ratio within this fraction of its target, either way, is too close to call. On a busy machine one run's ratio
# for the same code moves about that much (six runs, each on two cores shared with two busy processes: the import
# row's ratio ranged over 1.15-1.30 around its 1.25, the traced big MLP's over 0.94-1.00 around its 1.05), and a
# verdict that flips between met and missed from one run to the next says nothing; with this margin a row moves at
# most between met and close, or close and missed.
TOLERANCE = 0.10


class BenchCheckError(TensorplugError, AssertionError):
    """tensorplug and the reference disagree on a workload: timing it would compare different computations."""


@dataclass(frozen=True)
class Row:
    """One line of the results table; times are seconds per call (per process for the import row)."""

    backend: str | None  # None for the import row, which concerns every installed backend
    device: str | None
    workload: str
    reference_name: str  # what the reference calls: "np.add", "NumPy by hand", "raw PyTorch eager"
    reference: float
    tensorplug: float

    @property
    def target(self) -> float | None:
        """The largest ratio tensorplug / reference this row may have (None: shown for information, no target)."""
        return TARGETS.get((self.backend, self.workload, self.reference_name))

    @property
    def ratio(self) -> float:
        return self.tensorplug / self.reference

    @property
    def verdict(self) -> str | None:
        """ "met", "missed", or "close" (within TOLERANCE of the target either way); None where there is no target."""
        target = self.target
        if target is None:
            return None
        if self.ratio <= target / (1 + TOLERANCE):
            return "met"
        if self.ratio > target * (1 + TOLERANCE):
            return "missed"
        return "close"

    @property
    def met(self) -> bool | None:
        """Whether the target is met (True) or missed (False); None where there is no target or it is too close."""
        verdict = self.verdict
        return None if verdict in (None, "close") else verdict == "met"


@dataclass
class BackendResult:
    """What benchmarking one backend gave: its rows, the reference they were measured against, what failed."""

    backend: str
    device: str
    reference: str
    rows: list[Row]
    failures: list[str]


# -- tensorplug's side of each workload ------------------------------------------------------------------------------


class TensorplugMLP:
    """The SGD step with tensorplug: tp.variable_grads for the gradients, Variable.assign for the update."""

    def __init__(self, problem: MLPProblem, prefix: str) -> None:
        self.problem = problem
        self.x = tp.tensor(problem.x)
        self.onehot = tp.tensor(problem.onehot)
        kinds = ["W", "b"] * (len(problem.weights) // 2)
        names = [f"{prefix}/{kind}{i // 2 + 1}" for i, kind in enumerate(kinds)]
        self.params = [tp.variable(p.copy(), name=name) for p, name in zip(problem.weights, names, strict=True)]
        self.learning_rate = problem.learning_rate

    def reset(self) -> None:
        """Back to the initial weights."""
        for variable, initial in zip(self.params, self.problem.weights, strict=True):
            variable.assign(initial.copy())

    def loss(self) -> tp.Tensor:
        layers = len(self.params) // 2
        h = self.x
        for i in range(layers):
            h = tp.matmul(h, self.params[2 * i]) + self.params[2 * i + 1]
            if i < layers - 1:
                h = tp.relu(h)
        return tp.losses.softmax_cross_entropy(self.onehot, h)

    def step(self) -> tp.Tensor:
        value, grads = tp.variable_grads(self.loss, self.params)
        for p in self.params:
            p.assign(p - self.learning_rate * grads[p.name])
        return value

    def loss_and_weights(self) -> tuple[float, list[np.ndarray]]:
        self.reset()
        loss = float(self.step().item())
        return loss, [p.numpy() for p in self.params]


class MinimizeMLP(TensorplugMLP):
    """The same SGD step as TensorplugMLP, through the optimizer: ``tp.train.SGD(rate).minimize(loss, variables)``."""

    def __init__(self, problem: MLPProblem, prefix: str) -> None:
        super().__init__(problem, prefix)
        self.optimizer = tp.train.SGD(problem.learning_rate)

    def step(self) -> tp.Tensor:
        return self.optimizer.minimize(self.loss, self.params)


class TracedMLP(TensorplugMLP):
    """The same SGD step as TensorplugMLP, through ``tp.function``: traced on the first call, replayed after."""

    def __init__(self, problem: MLPProblem, prefix: str) -> None:
        super().__init__(problem, prefix)
        self.traced = tp.function(super().step)

    def step(self) -> tp.Tensor:
        loss: tp.Tensor = self.traced()
        return loss


@contextlib.contextmanager
def restarted(model: MLPStep) -> Iterator[None]:
    """Each repeat starts from the initial weights, so that every repeat times the same steps."""
    model.reset()
    yield


class BackendBench:
    """The workloads on one backend (the active one), each beside the same workload in ``reference``."""

    def __init__(self, backend: Backend, reference: Reference, settings: Settings) -> None:
        self.backend = backend
        self.reference = reference
        self.settings = settings
        self.sync: Callable[[], None] | None = backend.synchronize if is_asynchronous(backend) else None

    def row(self, workload: str, reference: Workload, reference_name: str, candidate: Workload) -> Row:
        reference_time, candidate_time = compare(reference, candidate, self.settings)
        return Row(self.backend.name, self.backend.device, workload, reference_name, reference_time, candidate_time)

    def candidate(
        self,
        stmt: str,
        namespace: dict[str, object],
        around: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext,
        calls: int = 1,
    ) -> Workload:
        """tensorplug's side of a workload: ``stmt``, then a wait for the device where the backend needs one."""
        return Workload(synced(stmt, self.sync), {**namespace, "sync": self.sync}, around, calls)

    def check(self, workload: str, got: tp.Tensor, expected: np.ndarray, reference_name: str) -> None:
        """tensorplug must compute what the reference computes (float32 rounding apart)."""
        values = got.numpy()
        if values.shape != expected.shape or not np.allclose(values, expected, rtol=1e-5, atol=1e-7):
            raise BenchCheckError(
                f"{workload} on backend {self.backend.name!r}: tensorplug gives {values!r}, "
                f"{reference_name} gives {expected!r}"
            )

    def dispatch(self) -> Row:
        a, b = tp.tensor(one_element(1.5)), tp.tensor(one_element(2.5))
        inputs = {"a": a, "b": b}
        timed = self.reference.add(one_element(1.5), one_element(2.5))
        self.check(DISPATCH, run_one_output("Add", inputs), one_element(4.0), timed.name)
        candidate = self.candidate('run_kernel("Add", inputs)', {"run_kernel": tp.run_kernel, "inputs": inputs})
        return self.row(DISPATCH, timed.workload, timed.name, candidate)

    def recording(self) -> Row:
        # While recording, every kernel touching the watched tensor a is recorded and the records stay in
        # memory until the scope closes; so each scope records a bounded block of calls, as a forward pass
        # of a model would, and the cost of opening and closing it is shared among them.
        check_recording_records()
        a, b = tp.tensor(one_element(1.5)), tp.tensor(one_element(2.5))
        timed = self.reference.recording_add(one_element(1.5), one_element(2.5))
        add = synced('run_kernel("Add", inputs)', self.sync)
        stmt = f"with Scope(watched):\n    for _ in block:\n        {add}\n"
        block = range(RECORDS_PER_SCOPE)
        namespace = {"run_kernel": tp.run_kernel, "inputs": {"a": a, "b": b}, "Scope": _Scope, "watched": [a]}
        candidate = Workload(stmt, {**namespace, "block": block, "sync": self.sync}, calls=len(block))
        return self.row(RECORDING, timed.workload, timed.name, candidate)

    def operator(self) -> Row:
        a, b = tp.tensor(one_element(1.5)), tp.tensor(one_element(2.5))
        timed = self.reference.operator_add(one_element(1.5), one_element(2.5))
        self.check(OPERATOR, a + b, one_element(4.0), timed.name)
        return self.row(OPERATOR, timed.workload, timed.name, self.candidate("a + b", {"a": a, "b": b}))

    def small_grad(self, traced: bool = False) -> Row:
        workload = SMALL_GRAD_TRACED if traced else SMALL_GRAD
        x_np, w_np, b_np = one_element(0.3), one_element(-1.2), one_element(0.4)
        x, w, b = tp.tensor(x_np), tp.tensor(w_np), tp.tensor(b_np)
        df = tp.grad(lambda x: tp.sum(tp.tanh(x * w + b)))
        if traced:
            df = tp.function(df)
        timed, expected = self.reference.small_grad(x_np, w_np, b_np)
        for _ in range(2 if traced else 1):  # the traced call, then a replay
            self.check(workload, df(x), expected, timed.name)
        return self.row(workload, timed.workload, timed.name, self.candidate("df(x)", {"df": df, "x": x}))

    def mlp(self, workload: str, how: str = "") -> Row:
        """The SGD step of ``workload``'s MLP; ``how``: "" (variable_grads and assign), MINIMIZE or TRACED."""
        sizes, batch = MLPS[workload]
        problem = make_problem(sizes, batch)
        kind, suffix = {"": (TensorplugMLP, ""), MINIMIZE: (MinimizeMLP, "-minimize"), TRACED: (TracedMLP, "-traced")}[
            how
        ]
        prefix = f"bench-{self.backend.name}-{'-'.join(map(str, sizes))}{suffix}"
        return self.training_step(workload + how, self.reference.mlp(problem), kind(problem, prefix), how == TRACED)

    def cnn(self, traced: bool = False) -> Row:
        """The Adam step of the digits CNN, eager or through ``tp.function``."""
        problem = make_cnn_problem()
        prefix = f"bench-{self.backend.name}-cnn{'-traced' if traced else ''}"
        with_tp = TensorplugCNN(problem, prefix, traced)
        return self.training_step(CNN_TRACED if traced else CNN, self.reference.cnn(problem), with_tp, traced)

    def training_step(self, workload: str, reference: MLPStep, with_tp: MLPStep, traced: bool) -> Row:
        """A training step beside the reference's: checked to take the same step, then timed from the same start."""
        if traced:
            with_tp.reset()
            with_tp.step()  # traced here: the check below compares a replay
        check_same_step(workload, self.backend.name, self.reference.mlp_name, reference, with_tp)
        sync = self.reference.sync
        reference_workload = Workload(
            synced("model.step()", sync), {"model": reference, "sync": sync}, around=lambda: restarted(reference)
        )
        candidate = self.candidate("model.step()", {"model": with_tp}, around=lambda: restarted(with_tp))
        return self.row(workload, reference_workload, self.reference.mlp_name, candidate)

    def steps(self) -> list[tuple[str, Callable[[], Row]]]:
        """Each workload with what times it, in the order of the table."""
        return [
            (DISPATCH, self.dispatch),
            (RECORDING, self.recording),
            (OPERATOR, self.operator),
            (SMALL_GRAD, self.small_grad),
            (SMALL_MLP, lambda: self.mlp(SMALL_MLP)),
            (BIG_MLP, lambda: self.mlp(BIG_MLP)),
            (SMALL_MLP_MINIMIZE, lambda: self.mlp(SMALL_MLP, MINIMIZE)),
            (BIG_MLP_MINIMIZE, lambda: self.mlp(BIG_MLP, MINIMIZE)),
            (SMALL_GRAD_TRACED, lambda: self.small_grad(traced=True)),
            (SMALL_MLP_TRACED, lambda: self.mlp(SMALL_MLP, TRACED)),
            (BIG_MLP_TRACED, lambda: self.mlp(BIG_MLP, TRACED)),
            (CNN, self.cnn),
            (CNN_TRACED, lambda: self.cnn(traced=True)),
        ]


def is_asynchronous(backend: Backend) -> bool:
    """Whether timed calls must wait for the backend: it has a ``synchronize`` of its own and is not on the CPU."""
    return type(backend).synchronize is not Backend.synchronize and backend.device != "cpu"


def check_recording_records() -> None:
    """Make sure the recording workload really records (so it does not silently time the no-tape path)."""
    a, b = tp.tensor(one_element(1.0)), tp.tensor(one_element(2.0))
    with _Scope([a]) as scope:
        tp.run_kernel("Add", {"a": a, "b": b})
    if len(scope.tape.records) != 1:
        raise BenchCheckError(f"{RECORDING}: the recording scope recorded {len(scope.tape.records)} kernels, not 1")


def check_same_step(workload: str, backend: str, reference_name: str, reference: MLPStep, with_tp: MLPStep) -> None:
    """Both implementations must compute the same loss and the same updated weights from the same start."""
    expected_loss, expected_weights = reference.loss_and_weights()
    loss, weights = with_tp.loss_and_weights()
    where = f"{workload} on backend {backend!r}"
    if not np.isclose(loss, expected_loss, rtol=1e-4):
        raise BenchCheckError(f"{where}: the loss is {loss} with tensorplug, {expected_loss} with {reference_name}")
    for i, (got, expected) in enumerate(zip(weights, expected_weights, strict=True)):
        if not np.allclose(got, expected, rtol=1e-4, atol=1e-6):
            worst = float(np.max(np.abs(got - expected)))
            raise BenchCheckError(
                f"{where}: updated weight {i} differs from {reference_name}'s by up to {worst:.3g} after one step"
            )


# -- every backend, and the import time ------------------------------------------------------------------------------


def announce(what: str) -> None:
    """Say what is being timed (on stderr, so that stdout holds only the results)."""
    print(f"timing {what} ...", file=sys.stderr, flush=True)


def bench_backend(name: str, settings: Settings) -> BackendResult:
    """Every workload on backend ``name`` against its reference; the backend active before is active again after.

    A workload that fails (a missing kernel, a wrong result) is reported in
    ``failures`` and the others still run. Raises ``tp.BackendError`` when the
    backend does not initialise.
    """
    previous = engine.active
    tp.set_backend(name)
    try:
        backend = tp.backend()
        reference = reference_for(backend)
        bench = BackendBench(backend, reference, settings)
        rows, failures = [], []
        for workload, run in bench.steps():
            announce(f"{workload} on {name} ({backend.device})")
            try:
                rows.append(run())
            except TensorplugError as exc:
                failures.append(f"{workload} on backend {name!r}: {type(exc).__name__}: {exc}")
                print(f"FAILED: {failures[-1]}", file=sys.stderr, flush=True)
        return BackendResult(name, backend.device, reference.name, rows, failures)
    finally:
        if previous is not None:
            tp.set_backend(previous.name)


AUTOGRAD = "HIPS autograd"


def bench_autograd(settings: Settings) -> BackendResult:
    """HIPS autograd on the workloads it can do (gradients and MLP steps) against NumPy by hand, for comparison.

    It runs on NumPy's CPU arrays, so its rows sit beside the numpy backend's:
    the same reference, the same problems.
    """
    reference = NumpyReference()
    rows = []
    x, w, b = one_element(0.3), one_element(-1.2), one_element(0.4)
    announce(f"{SMALL_GRAD} with {AUTOGRAD}")
    timed, expected = reference.small_grad(x, w, b)
    df = autograd_small_grad()
    if not np.allclose(df(x, w, b), expected, rtol=1e-5):
        raise BenchCheckError(f"{SMALL_GRAD}: {AUTOGRAD} gives {df(x, w, b)!r}, {timed.name} gives {expected!r}")
    candidate = Workload("df(x, w, b)", {"df": df, "x": x, "w": w, "b": b})
    rows.append(Row(AUTOGRAD, "cpu", SMALL_GRAD, timed.name, *compare(timed.workload, candidate, settings)))
    rows += _mlp_rows(AUTOGRAD, AutogradMLP, reference, settings)
    return BackendResult(AUTOGRAD, "cpu", reference.name, rows, [])


def _mlp_rows(
    label: str, make: Callable[[MLPProblem], MLPStep], reference: NumpyReference, settings: Settings
) -> list[Row]:
    """The MLP step of a library compared with NumPy by hand (``make(problem)`` builds it), on every MLP problem:
    checked to take the same step first, then timed interleaved with the reference."""
    rows = []
    for workload, (sizes, batch) in MLPS.items():
        announce(f"{workload} with {label}")
        problem = make_problem(sizes, batch)
        by_hand, other = reference.mlp(problem), make(problem)
        check_same_step(workload, label, reference.mlp_name, by_hand, other)
        hand = Workload("model.step()", {"model": by_hand}, around=functools.partial(restarted, by_hand))
        theirs = Workload("model.step()", {"model": other}, around=functools.partial(restarted, other))
        rows.append(Row(label, "cpu", workload, reference.mlp_name, *compare(hand, theirs, settings)))
    return rows


JAX_JIT = "JAX (jax.jit)"
JAX_EAGER = "JAX (eager)"


def bench_jax(settings: Settings) -> list[BackendResult]:
    """JAX on the CPU (when installed) against NumPy by hand, beside the traced rows: ``jax.jit`` on every
    workload it can do (the gradient and the MLP steps), and JAX eager on the gradient. Each is checked to
    agree with NumPy by hand first, and timed interleaved with it, as every other row.
    """
    reference = NumpyReference()
    x, w, b = one_element(0.3), one_element(-1.2), one_element(0.4)
    timed, expected = reference.small_grad(x, w, b)
    results = []
    for label, jit in ((JAX_JIT, True), (JAX_EAGER, False)):
        announce(f"{SMALL_GRAD} with {label}")
        df = jax_small_grad(w, b, jit)
        got = np.asarray(df(x))
        if not np.allclose(got, expected, rtol=1e-5):
            raise BenchCheckError(f"{SMALL_GRAD}: {label} gives {got!r}, {timed.name} gives {expected!r}")
        candidate = Workload("df(x)", {"df": df, "x": x})
        rows = [Row(label, "cpu", SMALL_GRAD, timed.name, *compare(timed.workload, candidate, settings))]
        if jit:
            rows += _mlp_rows(label, JaxMLP, reference, settings)
        results.append(BackendResult(label, "cpu", reference.name, rows, []))
    return results


def bench_import(settings: Settings) -> Row:
    """Whole-process time of importing tensorplug (with every installed plugin) against numpy and pluggy alone."""
    announce("import time")
    reference, candidate = compare_processes("import numpy, pluggy", "import tensorplug", settings)
    return Row(None, None, IMPORT, "import numpy, pluggy", reference, candidate)
