"""``tensorplug new-backend``: write a ready distribution skeleton for a new backend.

The files are rendered from the templates beside this module (``string.Template``,
``$name`` style) into a layout any outside author would use: a hatchling
pyproject with the ``tensorplug`` entry point, a src-layout package with the
plugin module, a Backend subclass and two kernels, a README and a test file;
``pytest`` in the new project runs the conformance suite on the backend.
"""

from __future__ import annotations

import re
import string
from importlib import resources
from pathlib import Path

from tensorplug._runtime._errors import TensorplugError

# Output path (with the package name filled in) -> template file; py.typed is written empty.
FILES: dict[str, str | None] = {
    "pyproject.toml": "pyproject.toml.tmpl",
    "README.md": "README.md.tmpl",
    "src/$package/__init__.py": "__init__.py.tmpl",
    "src/$package/py.typed": None,
    "src/$package/plugin.py": "plugin.py.tmpl",
    "src/$package/_backend.py": "_backend.py.tmpl",
    "src/$package/_kernels.py": "_kernels.py.tmpl",
    "tests/test_conformance.py": "test_conformance.py.tmpl",
}

_NAME = re.compile(r"[a-z][a-z0-9_]*")


class ScaffoldError(TensorplugError, ValueError):
    """The backend name is not usable, or the target directory is not empty."""


def check_name(name: str) -> None:
    """Raise ScaffoldError unless ``name`` is a lowercase identifier: letters, digits, underscores.

    >>> check_name("my_gpu")
    >>> check_name("My-GPU")
    Traceback (most recent call last):
    ...
    tensorplug._tools._scaffold.ScaffoldError: invalid backend name 'My-GPU': use a lowercase Python identifier ...
    """
    if not _NAME.fullmatch(name):
        raise ScaffoldError(
            f"invalid backend name {name!r}: use a lowercase Python identifier (lowercase letters, digits and "
            "underscores, starting with a letter), such as 'mygpu' or 'my_gpu'"
        )


def names(name: str) -> dict[str, str]:
    """The names the templates use for backend ``name``.

    >>> names("my_gpu")["distribution"], names("my_gpu")["package"], names("my_gpu")["backend_class"]
    ('tensorplug-my-gpu', 'tensorplug_my_gpu', 'MyGpuBackend')
    """
    from tensorplug import __version__
    from tensorplug.hookspecs import CONTRACT

    major, minor = (int(part) for part in __version__.split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return {
        "name": name,
        "distribution": "tensorplug-" + name.replace("_", "-"),
        "package": f"tensorplug_{name}",
        "backend_class": "".join(part.capitalize() for part in name.split("_") if part) + "Backend",
        "requirement": f"tensorplug>={major}.{minor},<{upper}",
        "contract": CONTRACT,
    }


def new_backend(name: str, directory: Path | None = None) -> list[Path]:
    """Write the skeleton of backend ``name`` into ``directory`` (default ``./tensorplug-<name>``); return its files.

    Refuses a directory that exists and is not empty.
    """
    check_name(name)
    values = names(name)
    target = Path(directory) if directory is not None else Path(values["distribution"])
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(f"{target} already exists and is not an empty directory; choose another DIR")
    templates = resources.files(__name__).joinpath("templates")
    written = []
    for relative, template in FILES.items():
        path = target / string.Template(relative).substitute(values)
        text = "" if template is None else string.Template(templates.joinpath(template).read_text()).substitute(values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
