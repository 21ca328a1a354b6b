"""``tensorplug demo``: train an MLP on the handwritten digits and report held-out accuracy.

The network is 64 pixels -> hidden units (ReLU) -> 10 class scores, trained
with mini-batch Adam (``tp.train.Adam``) on the softmax cross-entropy (with
label smoothing 0.1); 20 % of the digits (stratified by class) are held out
and only scored. Each step is traced once per batch shape by ``tp.function``
and replayed after (``--eager`` runs it op by op, to the same figures). Every
step goes through the ordinary ops, so it runs on any backend
(``--backend torch`` puts it on PyTorch, on the GPU when there is one).
``--save PATH`` writes a checkpoint after each epoch, and ``--resume PATH`` goes on from one (``tp.save`` and
``tp.restore``): the same figures as a run that was never stopped.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np

import tensorplug as tp
from tensorplug._runtime._install import pip_install
from tensorplug._tools._demo_export import export_classifier, exporter_missing
from tensorplug._tools._demo_model import CLASSES, MLP, Settings, split

RESUMED = ("hidden", "batch_size", "learning_rate", "seed")
"""The settings with a flag that a resumed run takes from its checkpoint (a different value on the command line
is refused)."""


@dataclass(frozen=True)
class Epoch:
    """One epoch's figures: mean training loss and accuracy over its batches, held-out accuracy, speed."""

    epoch: int
    loss: float
    accuracy: float
    held_out_accuracy: float
    examples_per_second: float


@dataclass
class Result:
    """What a run produced."""

    backend: str
    device: str
    train_examples: int
    held_out_examples: int
    epochs: list[Epoch] = field(default_factory=list)
    seconds: float = 0.0
    model: MLP | None = field(default=None, repr=False)  # the trained network

    @property
    def held_out_accuracy(self) -> float:
        return self.epochs[-1].held_out_accuracy if self.epochs else math.nan


def correct(logits: tp.Tensor, labels: tp.Tensor) -> tp.Tensor:
    """How many rows have their highest score at the true label (an int tensor, left on the device)."""
    return tp.sum(tp.cast(tp.equal(tp.argmax(logits, axis=1), labels), "int32"))


class Progress:
    """One line per epoch; on a terminal it fills a bar as the batches go, redrawing at most 10 times a second."""

    def __init__(self, epochs: int, out: TextIO) -> None:
        self.epochs = epochs
        self.out = out
        self.live = out.isatty()
        self.last_draw = 0.0

    def line(self, epoch: int, done: float, loss: float, accuracy: float, speed: float, tail: str = "") -> str:
        width = 24
        filled = round(width * done)
        bar = "#" * filled + "." * (width - filled)
        digits = len(str(self.epochs))
        return (
            f"epoch {epoch:{digits}d}/{self.epochs} [{bar}] loss {loss:.4f}  acc {accuracy:6.1%}  "
            f"{speed:8,.0f} examples/s{tail}"
        )

    def update(self, epoch: int, done: float, loss: float, accuracy: float, speed: float) -> None:
        now = time.perf_counter()
        if self.live and now - self.last_draw > 0.1:
            self.last_draw = now
            self.out.write("\r" + self.line(epoch, done, loss, accuracy, speed))
            self.out.flush()

    def finish(self, stats: Epoch) -> None:
        tail = f"  held-out {stats.held_out_accuracy:6.1%}"
        text = self.line(stats.epoch, 1.0, stats.loss, stats.accuracy, stats.examples_per_second, tail)
        self.out.write(("\r" if self.live else "") + text + "\n")
        self.out.flush()


def step(
    model: MLP, optimizer: tp.train.Optimizer, x: tp.Tensor, onehot: tp.Tensor, smoothing: float
) -> tuple[tp.Tensor, tp.Tensor]:
    """One optimizer step on a batch; returns the batch's mean loss and its logits (from the same forward pass)."""
    logits: list[tp.Tensor] = []

    def loss_fn() -> tp.Tensor:
        logits.append(model(x))
        return tp.losses.softmax_cross_entropy(onehot, logits[0], label_smoothing=smoothing)

    loss = optimizer.minimize(loss_fn, model.variables)
    return loss, logits[0]


def train(
    settings: Settings, out: TextIO | None = None, *, save: Path | None = None, resume: Path | None = None
) -> Result:
    """Train on the default backend; print progress to ``out`` (None: silent). ``save``: write a checkpoint
    there after each epoch; ``resume``: start from that checkpoint (see ``restore_checkpoint``)."""
    images, labels = tp.datasets.load_digits()
    train_rows, test_rows = split(labels, settings.held_out, settings.seed)
    x_train = tp.tensor(images[train_rows] / 16.0, dtype="float32")
    y_train = tp.tensor(labels[train_rows], dtype="int32")
    x_test = tp.tensor(images[test_rows] / 16.0, dtype="float32")
    y_test = tp.tensor(labels[test_rows], dtype="int32")
    onehot_train = tp.one_hot(y_train, CLASSES, dtype="float32")

    model = MLP(settings.hidden, settings.seed)
    optimizer = tp.train.Adam(settings.learning_rate)
    done = restore_checkpoint(resume, model, optimizer) if resume is not None else 0  # epochs trained before
    backend = tp.backend()
    result = Result(backend.name, backend.device, len(train_rows), len(test_rows))
    progress = Progress(done + settings.epochs, out) if out is not None else None
    rng = np.random.default_rng(settings.seed + 1)
    n = len(train_rows)
    for _ in range(done):  # the shuffles of the epochs already trained: a resumed run goes on as one run would
        rng.permutation(n)
    batches = [(start, min(start + settings.batch_size, n)) for start in range(0, n, settings.batch_size)]

    def train_step(batch: tp.Tensor, onehot: tp.Tensor) -> tuple[tp.Tensor, tp.Tensor]:
        return step(model, optimizer, batch, onehot, settings.label_smoothing)

    # Traced once per batch shape (the last batch may be smaller), then replayed as a flat kernel program.
    run_step = train_step if settings.eager else tp.function(train_step)
    started = time.perf_counter()
    for epoch in range(done + 1, done + settings.epochs + 1):
        order = tp.tensor(rng.permutation(n), dtype="int32")
        x_epoch, y_epoch, onehot_epoch = (tp.gather(t, order) for t in (x_train, y_train, onehot_train))
        epoch_start = time.perf_counter()
        loss_sum = tp.tensor(0.0)
        hits = tp.tensor(0)
        for done, (start, stop) in enumerate(batches, start=1):
            batch, onehot = x_epoch[start:stop], onehot_epoch[start:stop]
            loss, logits = run_step(batch, onehot)
            with tp.no_grad():  # running totals stay on the device: read back only to draw the bar
                loss_sum = loss_sum + loss * (stop - start)
                hits = hits + correct(logits, y_epoch[start:stop])
            if progress is not None and progress.live:  # `stop` examples seen so far in this epoch
                speed = stop / max(time.perf_counter() - epoch_start, 1e-9)
                progress.update(epoch, done / len(batches), loss_sum.item() / stop, hits.item() / stop, speed)
        with tp.no_grad():
            held_out = correct(model(x_test), y_test).item() / len(test_rows)
        seconds = time.perf_counter() - epoch_start
        stats = Epoch(epoch, loss_sum.item() / n, hits.item() / n, held_out, n / seconds)
        result.epochs.append(stats)
        if progress is not None:
            progress.finish(stats)
        if save is not None:  # after every epoch: an interrupted run leaves the last epoch's checkpoint, whole
            save_checkpoint(save, model, optimizer, settings, epoch)
    result.seconds = time.perf_counter() - started
    result.model = model
    return result


# -- checkpoints (--save, --resume) ----------------------------------------------------------------------------------


def save_checkpoint(path: Path, model: MLP, optimizer: tp.train.Optimizer, settings: Settings, epochs: int) -> None:
    """Save the model and its optimizer (``tp.save``), with what a resumed run needs to go on as this one would."""
    tree = {"model": {"w1": model.w1, "b1": model.b1, "w2": model.w2, "b2": model.b2}, "optimizer": optimizer}
    metadata = {
        "demo": "digits MLP",
        "epochs": epochs,
        "hidden": settings.hidden,
        "batch_size": settings.batch_size,
        "learning_rate": settings.learning_rate,
        "label_smoothing": settings.label_smoothing,
        "held_out": settings.held_out,
        "seed": settings.seed,
    }
    tp.save(path, tree, metadata=metadata)


def loss_text(label_smoothing: float) -> str:
    """What the demo minimises, as its help, header line and plot say it."""
    return f"softmax cross-entropy with label smoothing {label_smoothing:g}"


def conflicts(given: dict[str, Any], settings: Settings) -> list[str]:
    """The flags in ``given`` (None: not given) whose value differs from the resumed ``settings``."""
    return [
        f"--{name.replace('_', '-')} {value} (the checkpoint has {getattr(settings, name)})"
        for name, value in given.items()
        if value is not None and value != getattr(settings, name)
    ]


def resumed_settings(path: Path, settings: Settings) -> Settings:
    """``settings`` with the model size, data split, batch size and learning rate of the checkpoint at ``path``."""
    metadata = tp.load(path).metadata
    if metadata.get("demo") != "digits MLP":
        raise tp.CheckpointError(f"{str(path)!r} is not a checkpoint of tensorplug demo (write one with --save)")
    names = ("hidden", "batch_size", "learning_rate", "label_smoothing", "held_out", "seed")
    return replace(settings, **{name: metadata[name] for name in names})


def restore_checkpoint(path: Path, model: MLP, optimizer: tp.train.Optimizer) -> int:
    """Put the checkpoint's model and optimizer state back (``tp.restore``); return how many epochs it had trained."""
    tree = {"model": {"w1": model.w1, "b1": model.b1, "w2": model.w2, "b2": model.b2}, "optimizer": optimizer}
    epochs: int = tp.restore(path, tree)["epochs"]
    return epochs


def plot(result: Result, path: Path, label_smoothing: float) -> None:
    """Save the loss and accuracy curves as an image (PNG by the file's suffix); needs matplotlib."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    epochs = [e.epoch for e in result.epochs]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    left.plot(epochs, [e.loss for e in result.epochs], marker="o")
    left.set(title="training loss", xlabel="epoch", ylabel=loss_text(label_smoothing))
    right.plot(epochs, [100 * e.accuracy for e in result.epochs], marker="o", label="training")
    right.plot(epochs, [100 * e.held_out_accuracy for e in result.epochs], marker="s", label="held-out")
    right.set(title="accuracy", xlabel="epoch", ylabel="%")
    right.legend()
    for axes in (left, right):
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.grid(alpha=0.3)
    figure.suptitle(f"tensorplug demo: digits MLP on {result.backend} ({result.device})")
    figure.savefig(path)
    plt.close(figure)


def matplotlib_missing() -> str | None:
    """None when matplotlib imports, else what to install."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return f"--plot needs matplotlib: {pip_install('tensorplug', 'plot')} (or pip install matplotlib)"
    return None


def run(args: Any) -> int:
    """The ``tensorplug demo`` command."""
    out = sys.stdout
    if args.plot is not None:
        problem = matplotlib_missing()
        if problem is not None:  # said before training, not after
            print(f"tensorplug demo: error: {problem}", file=sys.stderr)
            return 2
    export = getattr(args, "export", None)
    if export is not None:
        problem = exporter_missing()
        if problem is not None:  # said before training, not after
            print(f"tensorplug demo: error: {problem}", file=sys.stderr)
            return 2
    if args.backend is not None:
        try:
            tp.set_backend(args.backend)
        except tp.BackendError as exc:
            print(f"tensorplug demo: error: {exc}", file=sys.stderr)
            return 2
    given = {name: getattr(args, name, None) for name in RESUMED}  # None: the flag was left out
    chosen = {name: value for name, value in given.items() if value is not None}
    settings = Settings(epochs=args.epochs, eager=args.eager, **chosen)
    save, resume = getattr(args, "save", None), getattr(args, "resume", None)
    if resume is not None:
        try:
            settings = resumed_settings(resume, settings)
        except (OSError, tp.CheckpointError) as exc:
            print(f"tensorplug demo: error: --resume: {exc}", file=sys.stderr)
            return 2
        clashes = conflicts(given, settings)
        if clashes:
            print(
                f"tensorplug demo: error: --resume {resume}: {', '.join(clashes)}: a resumed run keeps its "
                "checkpoint's model size, data split, batch size and learning rate; leave these flags out, or "
                "start a new run without --resume",
                file=sys.stderr,
            )
            return 2
        print(f"resuming from {resume}: its model, data split, batch size and learning rate", file=out)
    backend = tp.backend()
    print(
        f"tensorplug demo: a 64-{settings.hidden}-10 MLP on the UCI handwritten digits, "
        f"backend {backend.name!r} ({backend.device}), Adam lr={settings.learning_rate}, batch {settings.batch_size}, "
        f"loss: {loss_text(settings.label_smoothing)}, "
        f"{'eager' if settings.eager else 'steps traced with tp.function'}",
        file=out,
    )
    result = train(settings, out=out, save=save, resume=resume)
    print(
        f"held-out accuracy: {result.held_out_accuracy:.1%} on {result.held_out_examples} digits never trained on "
        f"({result.train_examples} training examples, {settings.epochs} epochs, {result.seconds:.1f} s)",
        file=out,
    )
    if args.plot is not None:
        plot(result, args.plot, settings.label_smoothing)
        print(f"saved the loss and accuracy curves to {args.plot}", file=out)
    if save is not None:
        print(f"saved the model and its optimizer to {save} (continue with --resume {save})", file=out)
    if export is not None:
        assert result.model is not None
        print(export_classifier(result.model, settings, export), file=out)
    return 0
