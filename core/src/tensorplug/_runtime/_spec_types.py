"""The registry entries' types: frozen dataclasses, one per kind of entry (backends, kernels, gradients, gradient
sets, decompositions, export translations, exporters).

Each is declared ``@dataclass(init=False, repr=False, eq=False)``, with its ``__init__`` written out
and its comparison, hash and repr inherited from :class:`FrozenFields`: generating those methods (an ``exec`` of
their source, per method and class) would cost more than the rest of the module at ``import tensorplug``. They
behave as the generated ones (``tests/unit/test_registry_records.py`` checks it), and ``dataclasses.fields``,
``replace`` and ``asdict`` work on them as on any dataclass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import FrozenInstanceError, dataclass, fields, replace
from typing import Any

RUNTIME = "runtime"  # the source of a registration made by user code

KernelFunc = Callable[[dict[str, Any], dict[str, Any], Any], Any]
"""``kernel(inputs, attrs, backend)``: raw storage in, raw storage (or a tuple of them) out."""

GradFunc = Callable[[Any, tuple[Any, ...], dict[str, Any]], Any]
"""``grad(dy, saved, attrs)``: one gradient per input (tuple in input order, or dict by name)."""

_set = object.__setattr__  # how a frozen dataclass's __init__ assigns a field
_COMPARED: dict[type[Any], tuple[str, ...]] = {}  # class -> the fields compared and hashed, in order
_SHOWN: dict[type[Any], tuple[str, ...]] = {}  # class -> the fields its repr shows, in order


def _field_names(cls: type[Any], cache: dict[type[Any], tuple[str, ...]], flag: str) -> tuple[str, ...]:
    names = cache.get(cls)
    if names is None:
        names = cache[cls] = tuple(f.name for f in fields(cls) if getattr(f, flag))
    return names


class Fields:
    """The ``__eq__`` and ``__repr__`` that ``@dataclass`` generates, written once for the dataclasses that declare
    ``eq=False, repr=False`` and inherit them (defining ``__eq__`` makes a class unhashable, as ``eq=True`` does)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _field_names(type(self), _COMPARED, "compare")
        return tuple([getattr(self, n) for n in names]) == tuple([getattr(other, n) for n in names])

    def __repr__(self) -> str:
        names = _field_names(type(self), _SHOWN, "repr")
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"


class FrozenFields(Fields):
    """:class:`Fields` and what ``frozen=True`` generates: the hash of the compared fields, and assigning or deleting
    a field raises ``dataclasses.FrozenInstanceError``."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(tuple([getattr(self, n) for n in _field_names(type(self), _COMPARED, "compare")]))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass(init=False, repr=False, eq=False)
class BackendSpec(FrozenFields):
    """A backend declaration: its name, its factory (callable or ``"module:attr"``) and priority.

    The factory is called with the options given to ``set_backend`` and
    returns a :class:`tensorplug.Backend`. The default backend is the highest
    priority one whose factory succeeds. ``priority`` may also be a cheap
    function (or ``"module:attr"``) returning an int, asked once when the
    backends are first ranked; it must not import the backend's library
    (a torch backend asks whether a CUDA device is present, say).
    ``fallback`` names another backend that runs the kernels this one
    lacks, with the data moved there and the results moved back (a partial
    backend); each kernel that falls back warns once (``FallbackWarning``).
    """

    name: str
    factory: Callable[..., Any] | str
    priority: int | Callable[[], int] | str = 0
    source: str = RUNTIME
    fallback: str | None = None

    def __init__(
        self,
        name: str,
        factory: Callable[..., Any] | str,
        priority: int | Callable[[], int] | str = 0,
        source: str = RUNTIME,
        fallback: str | None = None,
    ) -> None:
        _set(self, "name", name)
        _set(self, "factory", factory)
        _set(self, "priority", priority)
        _set(self, "source", source)
        _set(self, "fallback", fallback)


@dataclass(init=False, repr=False, eq=False)
class KernelSpec(FrozenFields):
    """A kernel for one (kernel name, backend name) pair.

    ``kernel`` (and ``setup`` / ``dispose``) may be lazy ``"module:attr"``
    names, imported the first time the kernel runs, so that declaring a
    kernel never imports the backend's library. ``optional=True`` (which
    ``catalogue_kernels`` sets for the names it derives by convention) says
    the lazy ``kernel`` may not exist: when its module is not there or does
    not define it, the kernel is not registered for the backend (found when
    the backend is initialised, or when the kernel first runs); a module
    that raises on import is still an error.
    """

    kernel_name: str
    backend_name: str
    kernel: KernelFunc | str
    setup: Callable[[Any], None] | str | None = None
    dispose: Callable[[Any], None] | str | None = None
    override: bool = False
    source: str = RUNTIME
    note: str = ""
    """How the kernel runs when that is worth knowing (``"per-chunk"``: numpy's kernel mapped over each chunk
    of a dask array); ``tp.coverage()`` shows it beside the provider."""
    optional: bool = False

    def __init__(
        self,
        kernel_name: str,
        backend_name: str,
        kernel: KernelFunc | str,
        setup: Callable[[Any], None] | str | None = None,
        dispose: Callable[[Any], None] | str | None = None,
        override: bool = False,
        source: str = RUNTIME,
        note: str = "",
        optional: bool = False,
    ) -> None:
        _set(self, "kernel_name", kernel_name)
        _set(self, "backend_name", backend_name)
        _set(self, "kernel", kernel)
        _set(self, "setup", setup)
        _set(self, "dispose", dispose)
        _set(self, "override", override)
        _set(self, "source", source)
        _set(self, "note", note)
        _set(self, "optional", optional)

    @property
    def key(self) -> tuple[str, str]:
        return (self.kernel_name, self.backend_name)


@dataclass(init=False, repr=False, eq=False)
class GradientSpec(FrozenFields):
    """The gradient of one kernel, written with ops: ``grad(dy, saved, attrs)``.

    ``saved`` holds the inputs named in ``inputs_to_save`` (in that order)
    followed by the outputs whose indices are in ``outputs_to_save``. The
    result has one entry per input (tuple in input order, or dict by name):
    a Tensor, None (no gradient), or a zero-argument callable returning one,
    called only when that input needs a gradient.
    ``grad=None`` declares the kernel explicitly not differentiable.
    ``replay=True`` declares that the gradient is a function of ``dy``, ``saved`` and ``attrs`` alone, made of
    ops (no Python state, no values read back): eager backprop may then trace it once per signature and replay
    the program it made. ``replay=False`` declares that it runs as written at every backprop. Left None, where
    it is registered decides: a gradient that a plugin written for contract 1.1 or later declares through its
    hook (the core's included) is replayed; one registered at runtime (``tp.register_gradient``, a scope), or
    declared by an older plugin, runs as written unless registered with ``replay=True``.
    """

    kernel_name: str
    grad: GradFunc | str | None
    inputs_to_save: tuple[str, ...] = ()
    outputs_to_save: tuple[int, ...] = ()
    override: bool = False
    source: str = RUNTIME
    replay: bool | None = None

    def __init__(
        self,
        kernel_name: str,
        grad: GradFunc | str | None,
        inputs_to_save: tuple[str, ...] = (),
        outputs_to_save: tuple[int, ...] = (),
        override: bool = False,
        source: str = RUNTIME,
        replay: bool | None = None,
    ) -> None:
        _set(self, "kernel_name", kernel_name)
        _set(self, "grad", grad)
        _set(self, "inputs_to_save", inputs_to_save)
        _set(self, "outputs_to_save", outputs_to_save)
        _set(self, "override", override)
        _set(self, "source", source)
        _set(self, "replay", replay)

    @property
    def key(self) -> str:
        return self.kernel_name


@dataclass(init=False, repr=False, eq=False)
class GradientSet(FrozenFields):
    """A named set of gradient overrides, off until enabled with ``tp.use_gradients(name, **params)``.

    ``factory(**params)`` returns the GradientSpecs of the set (it may be a
    lazy ``"module:attr"`` name); ``params`` make sets such as
    ``clip(min, max)`` possible. ``replay`` is what its specs that leave
    their own ``replay`` None declare (see :class:`GradientSpec`); left None,
    a set a plugin written for contract 1.1 or later declares is replayed, one registered at runtime is not.
    """

    name: str
    factory: Callable[..., Sequence[GradientSpec]] | str
    description: str = ""
    source: str = RUNTIME
    replay: bool | None = None

    def __init__(
        self,
        name: str,
        factory: Callable[..., Sequence[GradientSpec]] | str,
        description: str = "",
        source: str = RUNTIME,
        replay: bool | None = None,
    ) -> None:
        _set(self, "name", name)
        _set(self, "factory", factory)
        _set(self, "description", description)
        _set(self, "source", source)
        _set(self, "replay", replay)

    @property
    def key(self) -> str:
        return self.name


@dataclass(init=False, repr=False, eq=False)
class DecompositionSpec(FrozenFields):
    """How kernel ``kernel_name`` decomposes into ops: ``fn(inputs, attrs)`` receives the kernel's inputs as
    Tensors by name and its attrs, and returns its output computed with ops (the kernel convention one level up).

    ``fn`` may be a lazy ``"module:attribute"`` name. A decomposition is the kernel on any backend that has none
    of its own (before a data-moving fallback), and the way to differentiate a kernel that has no gradient.
    """

    kernel_name: str
    fn: Callable[..., Any] | str
    source: str = RUNTIME

    def __init__(self, kernel_name: str, fn: Callable[..., Any] | str, source: str = RUNTIME) -> None:
        _set(self, "kernel_name", kernel_name)
        _set(self, "fn", fn)
        _set(self, "source", source)

    @property
    def key(self) -> str:
        return self.kernel_name


@dataclass(init=False, repr=False, eq=False)
class TranslationSpec(FrozenFields):
    """How the exporter of ``format`` writes kernel ``kernel_name``: ``translate`` is called in the exporter's
    converter convention (for ``"onnx"``: ``translate(graph, step)``, which adds ONNX nodes and returns the value
    name of each output; see ``docs/export.md``).

    ``translate`` may be a lazy ``"module:attribute"`` name, imported at the first export that needs it, so that
    declaring a translation never imports the format's library. An exporter uses a kernel's translation before its
    own converter of that kernel, and a kernel with neither is exported as its decomposition when it has one.

    >>> import tensorplug as tp
    >>> tp.TranslationSpec("onnx", "Swish", "my_kernels.onnx:swish").key
    ('onnx', 'Swish')
    """

    format: str
    kernel_name: str
    translate: Callable[..., Any] | str
    source: str = RUNTIME

    def __init__(
        self, format: str, kernel_name: str, translate: Callable[..., Any] | str, source: str = RUNTIME
    ) -> None:
        _set(self, "format", format)
        _set(self, "kernel_name", kernel_name)
        _set(self, "translate", translate)
        _set(self, "source", source)

    @property
    def key(self) -> tuple[str, str]:
        return (self.format, self.kernel_name)


@dataclass(init=False, repr=False, eq=False)
class ExporterSpec(FrozenFields):
    """A format ``tp.export`` can write: ``format`` names it, ``exporter(request)`` writes it.

    ``exporter`` is a callable or a lazy ``"module:attribute"`` name, imported at the first export in this
    format; ``description`` is one line for ``tp.exporters()`` and ``tensorplug info``. ``runner`` says how to run
    what the format exports, for checks (``tensorplug.testing.check_kernel`` exports a kernel and runs it): a
    callable of no arguments returning a ``tensorplug.testing.ExportRunner``, or a lazy ``"module:attribute"``
    name of one; None when the format declares none (its checks are skipped).

    >>> import tensorplug as tp
    >>> tp.ExporterSpec("onnx", "tensorplug_onnx:export", "ONNX models, opset 18").key
    'onnx'
    """

    format: str
    exporter: Callable[[Any], Any] | str
    description: str = ""
    source: str = RUNTIME
    runner: Callable[[], Any] | str | None = None

    def __init__(
        self,
        format: str,
        exporter: Callable[[Any], Any] | str,
        description: str = "",
        source: str = RUNTIME,
        runner: Callable[[], Any] | str | None = None,
    ) -> None:
        _set(self, "format", format)
        _set(self, "exporter", exporter)
        _set(self, "description", description)
        _set(self, "source", source)
        _set(self, "runner", runner)

    @property
    def key(self) -> str:
        return self.format


_OWN_INIT = frozenset(
    {BackendSpec, KernelSpec, GradientSpec, GradientSet, DecompositionSpec, TranslationSpec, ExporterSpec}
)


def with_fields(spec: Any, **changes: Any) -> Any:
    """``dataclasses.replace(spec, **changes)``, at a third of its cost for an instance of the types here (whose
    fields are all its attributes, set in order by ``__init__``: the copy shares its instance-dict layout); an
    instance of any other dataclass goes through ``replace``."""
    values = vars(spec)
    if type(spec) not in _OWN_INIT or not changes.keys() <= values.keys():
        return replace(spec, **changes)
    new = object.__new__(type(spec))
    for name, value in values.items():
        _set(new, name, changes.get(name, value))
    return new
