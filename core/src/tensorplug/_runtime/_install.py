"""How to install what the project ships: pip commands that work from a checkout of the repository.

The distributions are not published on a package index yet, so a hint names the folder of the checkout
(``pip install ./plugins/export-onnx``), never a bare distribution name that someone else could publish.
"""

from __future__ import annotations

CHECKOUT_FOLDERS: dict[str, str] = {
    "tensorplug": "./core",
    "tensorplug-numpy": "./plugins/backend-numpy",
    "tensorplug-torch": "./plugins/backend-torch",
    "tensorplug-dask": "./plugins/backend-dask",
    "tensorplug-onnx": "./plugins/export-onnx",
    "tensorplug-grads-extra": "./plugins/grads-extra",
}


def pip_install(distribution: str, extra: str | None = None) -> str:
    """The pip command that installs ``distribution`` (with ``extra``) from the root of a checkout.

    >>> pip_install("tensorplug-onnx")
    'pip install ./plugins/export-onnx'
    >>> pip_install("tensorplug", "plot")
    "pip install './core[plot]'"
    """
    folder = CHECKOUT_FOLDERS[distribution]
    if extra is None:
        return f"pip install {folder}"
    return f"pip install '{folder}[{extra}]'"
