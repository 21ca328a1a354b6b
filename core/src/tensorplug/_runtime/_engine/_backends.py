"""The engine's backends and dispatch tables: the ``Engine`` (backends declared, initialised and active;
each backend's table of kernels, filled lazily from the kernel registry; the slow path that resolves a
missing kernel, through a fallback backend when one is declared), the one ``engine``, and the messages of
a kernel that cannot be found. ``run_kernel``, the hot path that reads these tables, is in
:mod:`tensorplug._runtime._engine`.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Mapping
from typing import Any

from tensorplug._runtime._absent_kernels import absent_note, drop_if_absent, known_absent
from tensorplug._runtime._backend import Backend
from tensorplug._runtime._engine._decomposed import DecomposedKernel
from tensorplug._runtime._engine_view import view
from tensorplug._runtime._errors import (
    BackendError,
    FallbackWarning,
    KernelError,
    KernelNotFoundError,
    NoBackendError,
    RegistrationError,
    TensorplugError,
    warn,
)
from tensorplug._runtime._install import pip_install
from tensorplug._runtime._observe import ObservedKernel
from tensorplug._runtime._registry import (
    RUNTIME,
    BackendSpec,
    KernelFunc,
    KernelSpec,
    close_kernel_names,
    decomposition_registry,
    gradient_registry,
    kernel_registry,
    resolve,
)
from tensorplug._runtime._tensor import Tensor, moved_storage
from tensorplug.kernel_names import CATALOGUE

INSTALL_HINT = (
    f"install a backend from the checkout's root, for example `{pip_install('tensorplug-numpy')}` (CPU) "
    f"or `{pip_install('tensorplug-torch')}` (PyTorch, CUDA when present)"
)


class Engine:
    """Backends (declared, initialised, active) and the per-backend dispatch tables."""

    def __init__(self) -> None:
        self.specs: dict[str, BackendSpec] = {}
        self.instances: dict[str, Backend] = {}
        self.failures: dict[str, str] = {}
        self.priorities: dict[str, int] = {}
        self.active: Backend | None = None
        self.table: dict[str, KernelFunc] = {}
        self.tables: dict[str, dict[str, KernelFunc]] = {}
        self.fallback_tables: set[str] = set()  # backends whose table holds a fallback wrapper
        self.fallback_warned: set[tuple[str, str]] = set()  # (kernel, backend) pairs already warned about
        self.observing = 0  # active kernel observers (tp.profile, tp.debug): while > 0, kernels are wrapped
        self.generation = 0  # bumped at each table reset: a kernel resolved before one is not cached after it
        self.no_backend_hint: str | None = None  # why no plugin backend was loaded, when the environment said so
        self.lock = threading.RLock()
        kernel_registry.on_change(self._kernel_changed)
        decomposition_registry.on_change(lambda key: self._forget_fallbacks())  # a wrapper may hold the old one

    # -- backends ---------------------------------------------------------

    def add_backend(self, spec: BackendSpec, override: bool = False) -> None:
        with self.lock:
            old = self.specs.get(spec.name)
            if old is not None and not override:
                raise RegistrationError(
                    f"register_backend({spec.name!r}): a backend of that name is already registered "
                    f"by {old.source}; pass override=True to replace it"
                )
            self._check_fallback(spec)
            if old is not None:
                self.dispose(spec.name)
            self.specs[spec.name] = spec
            self.failures.pop(spec.name, None)
            self.priorities.pop(spec.name, None)
            self._forget_fallbacks()

    def _check_fallback(self, spec: BackendSpec) -> None:
        """Refuse a fallback that is not a backend name or that closes a cycle (the fallback may come later)."""
        if spec.fallback is None:
            return
        if not isinstance(spec.fallback, str) or not spec.fallback:
            raise RegistrationError(
                f"register_backend({spec.name!r}): fallback must be a backend name or None, not {spec.fallback!r}"
            )
        if spec.fallback == spec.name:
            raise RegistrationError(
                f"register_backend({spec.name!r}, fallback={spec.fallback!r}): a backend cannot fall back to itself "
                f"(a cycle ({spec.name} -> {spec.name})); name another backend, one that has the kernels this one "
                "lacks, or None"
            )
        chain = [spec.name]
        current: str | None = spec.fallback
        while current is not None:
            looped = current in chain
            chain.append(current)
            if looped:
                raise RegistrationError(
                    f"register_backend({spec.name!r}, fallback={spec.fallback!r}): the fallbacks would form a cycle "
                    f"({' -> '.join(chain)}); a backend's fallback chain must end in a backend with no fallback"
                )
            following = self.specs.get(current)
            current = None if following is None else following.fallback  # an unknown name is checked when used

    def remove_backend(self, name: str) -> BackendSpec:
        with self.lock:
            if name not in self.specs:
                raise BackendError(f"remove_backend({name!r}): no such backend; registered: {self.names()}")
            self.dispose(name)
            self.fallback_warned = {key for key in self.fallback_warned if key[1] != name}
            spec = self.specs.pop(name)
            self._forget_fallbacks()
            return spec

    def priority(self, name: str, spec: BackendSpec | None = None) -> int:
        """The priority of backend ``name`` (registered as ``spec``), asking its priority function once if any."""
        if spec is None:
            spec = self.specs[name]
        if isinstance(spec.priority, int):
            return spec.priority
        cached = self.priorities.get(name)
        if cached is None:
            try:
                cached = int(resolve(spec.priority, f"priority of backend {name!r}")())
            except Exception as exc:
                warn(f"the priority function of backend {name!r} (from {spec.source}) failed: {exc}; using 0")
                cached = 0
            self.priorities[name] = cached
        return cached

    def names(self) -> list[str]:
        """Registered backend names, highest priority first."""
        specs = dict(self.specs)  # a snapshot: another thread may register or remove a backend meanwhile
        return sorted(specs, key=lambda name: (-self.priority(name, specs[name]), name))

    def initialize(self, name: str, options: Mapping[str, Any] | None = None) -> Backend:
        """Return the backend instance, creating it (and running kernel setups) if needed."""
        with self.lock:
            backend = self.instances.get(name)
            if backend is not None and not options:
                return backend
            spec = self.specs.get(name)
            if spec is None:
                hint = f"registered: {', '.join(self.names())}" if self.specs else INSTALL_HINT
                raise BackendError(f"set_backend({name!r}): no backend of that name is registered ({hint})")
            if backend is not None:
                self.dispose(name)
            try:
                factory = resolve(spec.factory, f"backend {name!r}")
                backend = factory(**(options or {}))
            except Exception as exc:
                self.failures[name] = f"{type(exc).__name__}: {exc}"
                raise BackendError(
                    f"backend {name!r} (from {spec.source}) failed to initialise: {type(exc).__name__}: {exc}"
                ) from exc
            if not isinstance(backend, Backend):
                raise BackendError(
                    f"backend {name!r} (from {spec.source}): its factory returned {type(backend).__name__}, "
                    "not a tensorplug.Backend"
                )
            backend.name = name
            for kspec in list(kernel_registry):
                if kspec.backend_name == name and kspec.setup is not None:
                    _call_kernel_hook(kspec, "setup", backend)
            self.instances[name] = backend
            self.failures.pop(name, None)
            return backend

    def dispose(self, name: str) -> None:
        with self.lock:
            backend = self.instances.pop(name, None)
            if backend is None:
                return
            if self.active is backend:
                self.active = None
                self.table = {}
            for kspec in list(kernel_registry):
                if kspec.backend_name == name and kspec.dispose is not None:
                    _call_kernel_hook(kspec, "dispose", backend)
            self.tables.pop(name, None)
            self.generation += 1
            self._forget_fallbacks()  # their wrappers may hold this instance
            backend.dispose()

    def activate(self, name: str, options: Mapping[str, Any] | None = None) -> Backend:
        with self.lock:
            backend = self.initialize(name, options)
            self.table = self.tables.setdefault(name, {})
            self.active = backend
            return backend

    def ensure_active(self) -> Backend:
        """Initialise the default backend: the highest-priority one whose factory succeeds."""
        with self.lock:
            if self.active is not None:
                return self.active
            if not self.specs:
                raise NoBackendError(self.no_backend_message())
            errors = []
            for name in self.names():
                try:
                    return self.activate(name)
                except BackendError as exc:
                    errors.append(str(exc))
                    warn(f"{exc}; trying the next backend", stacklevel=4)
            raise NoBackendError(
                "No tensorplug backend could be initialised:\n  " + "\n  ".join(errors) + f"\nOtherwise {INSTALL_HINT}."
            )

    def no_backend_message(self) -> str:
        """What to say when no backend is registered: autoload disabled (or an allowlist), or nothing installed."""
        if self.no_backend_hint is not None:
            return f"No tensorplug backend is registered: {self.no_backend_hint}"
        return f"No tensorplug backend is installed: {INSTALL_HINT}."

    # -- kernels ----------------------------------------------------------

    def observe(self, delta: int) -> None:
        """Count an observer in (+1) or out (-1); the tables are rebuilt, wrapped or not, when it matters."""
        with self.lock:
            before = self.observing
            self.observing += delta
            if (before == 0) != (self.observing == 0):
                for backend_name in list(self.tables):
                    self._reset_table(backend_name)
                self.fallback_tables.clear()

    def _cache(self, backend_name: str, name: str, fn: KernelFunc, generation: int) -> KernelFunc:
        """Put ``fn`` in the backend's dispatch table (wrapped for the observers, if any) and return it.

        ``generation`` is the engine's when the lookup of ``fn`` began: if a table was reset since
        (another thread registered a kernel, say), ``fn`` may be stale and serves this call only.
        """
        with self.lock:
            if self.observing:
                fn = ObservedKernel(name, fn, fn.target if isinstance(fn, FallbackKernel) else None)
            if generation == self.generation:
                self.tables.setdefault(backend_name, {})[name] = fn
        return fn

    def _kernel_changed(self, key: Hashable) -> None:
        assert isinstance(key, tuple)
        with self.lock:
            self._reset_table(key[1])
            self._forget_fallbacks()  # a fallback wrapper may hold the kernel that changed

    def _reset_table(self, backend_name: str) -> None:
        self.generation += 1
        fresh: dict[str, KernelFunc] = {}
        self.tables[backend_name] = fresh
        if self.active is not None and self.active.name == backend_name:
            self.table = fresh

    def _forget_fallbacks(self) -> None:
        """Empty the tables holding fallback wrappers; they are made again, from the registries, when next used."""
        with self.lock:
            for backend_name in self.fallback_tables:
                self._reset_table(backend_name)
            self.fallback_tables.clear()

    def resolve_kernel(self, name: str, backend: Backend) -> KernelFunc:
        """Slow path of dispatch: find the active kernel spec, import it if lazy, cache it.

        A kernel the backend lacks resolves to a wrapper that runs it on the
        backend's fallback (see :meth:`fallback_kernel`), cached the same way.
        """
        generation = self.generation  # read before the registry: see _cache
        spec = kernel_registry.get((name, backend.name))
        if spec is None:
            return self._decomposed_or_fallback(name, backend, generation)
        try:
            fn: KernelFunc = resolve(spec.kernel, f"kernel {name!r} for backend {backend.name!r} (from {spec.source})")
        except TensorplugError:
            raise
        except Exception as exc:
            if drop_if_absent(spec):  # named by convention, not defined: the kernel is not registered after all
                return self._decomposed_or_fallback(name, backend, None)
            raise KernelError(
                f"kernel {name!r} for backend {backend.name!r} (from {spec.source}) could not be imported "
                f"from {spec.kernel!r}: {type(exc).__name__}: {exc}"
            ) from exc
        return self._cache(backend.name, name, fn, generation)

    def _decomposed_or_fallback(self, name: str, backend: Backend, generation: int | None) -> KernelFunc:
        """Kernel ``name`` of a backend that has none of its own: its decomposition, run there, when it has one;
        else the backend's fallback (:meth:`fallback_kernel`)."""
        decomposition = decomposition_registry.get(name)
        if decomposition is None:
            return self.fallback_kernel(name, backend, generation)
        with self.lock:
            self.fallback_tables.add(backend.name)  # forgotten, as fallbacks are, when a registry changes
            made = DecomposedKernel(name, decomposition, backend)
            return self._cache(backend.name, name, made, self.generation if generation is None else generation)

    def fallback_kernel(self, name: str, backend: Backend, generation: int | None = None) -> KernelFunc:
        """A kernel of ``backend`` that runs kernel ``name`` on the first backend of its fallback chain having it.

        Raises KernelNotFoundError when no backend of the chain has it, and
        BackendError when the chain names an unknown backend or loops.
        """
        with self.lock:
            if generation is None:
                generation = self.generation
            target_name = self._fallback_with(name, backend.name)
            if target_name is None:
                raise KernelNotFoundError(missing_kernel_message(name, backend.name))
            try:
                target = self.initialize(target_name)
            except BackendError as exc:
                raise BackendError(
                    f"backend {backend.name!r} has no kernel {name!r}, and its fallback backend {target_name!r} "
                    f"failed to initialise: {exc}"
                ) from exc
            target_spec = kernel_registry.get((name, target_name))
            if target_spec is not None and drop_if_absent(target_spec):  # named by convention there, not defined
                return self.fallback_kernel(name, backend)
            fn = self.tables.get(target_name, {}).get(name)
            if fn is None:
                fn = self.resolve_kernel(name, target)
            if isinstance(fn, ObservedKernel):
                fn = fn.fn  # observed once, as the home backend's kernel
            wrapper = FallbackKernel(name, fn, backend, target)
            self.fallback_tables.add(backend.name)
            if (name, backend.name) not in self.fallback_warned:
                self.fallback_warned.add((name, backend.name))
                warn(
                    f"backend {backend.name!r} has no kernel {name!r}; it runs on the fallback backend "
                    f"{target_name!r}, with the data moved there and the results moved back. Register the kernel "
                    f"(tp.register_kernel({name!r}, {backend.name!r}, fn)) to run it natively, or silence this with "
                    'warnings.filterwarnings("ignore", category=tp.FallbackWarning)',
                    FallbackWarning,
                    stacklevel=6,
                )
            return self._cache(backend.name, name, wrapper, generation)

    def _fallback_with(self, name: str, backend_name: str) -> str | None:
        """The first backend of ``backend_name``'s fallback chain that has kernel ``name`` (None if none has)."""
        chain = [backend_name]
        current = self.specs[backend_name].fallback if backend_name in self.specs else None
        while current is not None:
            if current in chain:
                raise BackendError(f"the fallbacks of backend {backend_name!r} form a cycle: {' -> '.join(chain)}")
            spec = self.specs.get(current)
            if spec is None:
                raise BackendError(
                    f"backend {chain[-1]!r} has no kernel {name!r} and falls back to {current!r}, which is not a "
                    f"registered backend (registered: {', '.join(self.names())}); install or register it, or "
                    "register the kernel"
                )
            chain.append(current)
            if kernel_registry.get((name, current)) is not None:
                return current
            current = spec.fallback
        return None

    def move(self, t: Tensor, target: Backend) -> None:
        """Move ``t``'s storage to ``target`` in place (as TensorFlow.js does on a backend switch)."""
        if t.is_disposed:
            t._data.shape  # raises the "was disposed" error  # noqa: B018
        t._data = moved_storage(t, target, "moving a tensor to the active backend")
        t._backend = target


def _call_kernel_hook(spec: KernelSpec, which: str, backend: Backend) -> None:
    fn = getattr(spec, which)
    try:
        resolve(fn, f"{which} of kernel {spec.kernel_name!r}")(backend)
    except Exception as exc:
        raise BackendError(
            f"{which} of kernel {spec.kernel_name!r} for backend {spec.backend_name!r} "
            f"(from {spec.source}) failed: {type(exc).__name__}: {exc}"
        ) from exc


def missing_kernel_message(name: str, backend_name: str) -> str:
    """Which kernel is missing where, which backends have it and the distribution that provides each, and what to do."""
    fallbacks = []
    spec = engine.specs.get(backend_name)
    while spec is not None and spec.fallback is not None and spec.fallback not in fallbacks:
        fallbacks.append(spec.fallback)
        spec = engine.specs.get(spec.fallback)
    nor = f" (nor for its fallback chain: {' -> '.join(fallbacks)})" if fallbacks else ""
    why = absent_note(name, backend_name)
    if why is not None:
        nor += f": {why}"
    rank = {b: i for i, b in enumerate(engine.names())}  # the highest-priority backend first: the one to suggest
    having = sorted(
        (s for s in kernel_registry if s.kernel_name == name and not known_absent(s)),
        key=lambda s: (rank.get(s.backend_name, len(rank)), s.backend_name),
    )
    if having:
        where = ", ".join(f"{s.backend_name} ({_provided_by(s.source)})" for s in having)
        hint = (
            f"Backends that have it: {where}. Switch with tp.set_backend({having[0].backend_name!r}), "
            f"register one with tp.register_kernel({name!r}, {backend_name!r}, fn), or let {backend_name!r} fall "
            f"back to a backend that has it (tp.register_backend(..., fallback={having[0].backend_name!r}))."
        )
    else:
        hint = f"No backend has it; register one with tp.register_kernel({name!r}, {backend_name!r}, fn)."
        known = {*CATALOGUE, *(s.kernel_name for s in kernel_registry), *(s.kernel_name for s in gradient_registry)}
        close = close_kernel_names(name, known)
        if close:
            hint = f"Did you mean {' or '.join(map(repr, close))}? {hint}"
    return f"No kernel {name!r} is registered for backend {backend_name!r}{nor}. {hint}"


def _provided_by(source: str) -> str:
    return "registered at runtime" if source == RUNTIME else f"from {source}"


class FallbackKernel:
    """A kernel of backend ``home`` that runs ``fn``, a kernel of ``target``, on inputs moved there; results move back.

    This is what a missing kernel resolves to when ``home`` declares a fallback:
    it sits in ``home``'s dispatch table like any kernel, so the tape records the
    call as usual and gradients (written with ops) dispatch on ``home`` again.
    """

    __slots__ = ("fn", "home", "name", "target")

    def __init__(self, name: str, fn: KernelFunc, home: Backend, target: Backend) -> None:
        self.name = name
        self.fn = fn
        self.home = home
        self.target = target

    def __call__(self, inputs: dict[str, Any], attrs: dict[str, Any], backend: Any) -> Any:
        home, target = self.home, self.target
        moved: dict[str, Any] = {}
        for key, raw in inputs.items():
            if isinstance(raw, list | tuple):
                moved[key] = [target.move_from(r, home) for r in raw]
            else:
                moved[key] = target.move_from(raw, home)
        out = self.fn(moved, attrs, target)
        if type(out) is tuple or type(out) is list:
            return tuple(home.move_from(o, target) for o in out)
        return home.move_from(out, target)

    def __repr__(self) -> str:
        return f"<FallbackKernel {self.name!r} of backend {self.home.name!r}, run on {self.target.name!r}>"


engine = Engine()
# What the runtime modules below the engine read of it, given here so that none of them imports it.
view.observe = engine.observe
view.active_name = lambda: None if engine.active is None else engine.active.name
view.names = engine.names
