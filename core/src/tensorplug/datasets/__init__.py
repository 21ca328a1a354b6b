"""Small data sets shipped with tensorplug, read with the standard library and numpy (nothing is unpickled).

``load_digits()``: the UCI handwritten digits (8x8 images, 10 classes), the
data ``tensorplug demo`` trains on. Attribution and licence: README.md in
this folder (CC BY 4.0, E. Alpaydin and C. Kaynak, UCI Machine Learning
Repository).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Digits", "load_digits"]

DIGITS_FILE = "digits.csv.gz"
DIGITS_SHAPE = (1797, 65)  # 64 pixels then the label


class Digits(NamedTuple):
    """The digits data: ``images`` float32 [n, 64] (pixels 0..16), ``labels`` int64 [n] (0..9)."""

    images: np.ndarray
    labels: np.ndarray


def load_digits() -> Digits:
    """The 1797 UCI handwritten digits as numpy arrays (8x8 images flattened row by row).

    >>> from tensorplug.datasets import load_digits
    >>> images, labels = load_digits()
    >>> images.shape, labels.shape, int(images.max()), sorted(set(labels.tolist())) == list(range(10))
    ((1797, 64), (1797,), 16, True)
    """
    import gzip  # here, not at the top: importlib.resources alone would add ~20 ms to `import tensorplug`
    from importlib.resources import files

    with files(__name__).joinpath(DIGITS_FILE).open("rb") as packed, gzip.open(packed, "rt", encoding="ascii") as text:
        table = np.loadtxt(text, delimiter=",", dtype=np.int64)
    if table.shape != DIGITS_SHAPE:
        raise ValueError(
            f"{DIGITS_FILE}: expected {DIGITS_SHAPE[0]} rows of {DIGITS_SHAPE[1]} values, got {table.shape}"
        )
    return Digits(table[:, :64].astype(np.float32), table[:, 64].copy())
