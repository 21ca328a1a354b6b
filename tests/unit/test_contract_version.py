"""What the loader makes of the contract version a plugin module declares (``TENSORPLUG_CONTRACT``), checked on
module objects here; tests/plugins/test_contract_version.py does it with installed distributions."""

from __future__ import annotations

import types

import pytest

import tensorplug as tp
from tensorplug._plugins import _contract
from tensorplug._plugins._contract import Deprecation, declared_contract, parse

WHO = "plugin 'p' from tensorplug-p 1.0"


def _module(**attributes: object) -> types.ModuleType:
    module = types.ModuleType("tensorplug_p.plugin")
    module.__dict__.update(attributes)
    return module


def test_the_core_publishes_its_contract_version() -> None:
    major, minor = parse(tp.PLUGIN_CONTRACT)
    assert major >= 1
    assert minor >= 0


@pytest.mark.parametrize("text", ["1", "1.1.0", "01.1", "1.x", " 1.1", ""])
def test_a_version_is_two_numbers(text: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the message is the loader's, tested below
        parse(text)


def test_the_same_major_and_an_older_minor_load_quietly() -> None:
    major, _ = parse(tp.PLUGIN_CONTRACT)
    assert declared_contract(_module(TENSORPLUG_CONTRACT=f"{major}.0"), WHO) == (f"{major}.0", [])
    assert declared_contract(_module(), WHO) == (None, [])


def test_another_major_is_refused_with_both_versions() -> None:
    major, _ = parse(tp.PLUGIN_CONTRACT)
    with pytest.raises(ValueError, match=rf"written for tensorplug's plugin contract {major + 1}\.0, and this"):
        declared_contract(_module(TENSORPLUG_CONTRACT=f"{major + 1}.0"), WHO)


def test_a_deprecated_feature_a_plugin_uses_is_warned_with_its_migration(monkeypatch: pytest.MonkeyPatch) -> None:
    old = Deprecation("the hook tensorplug_old", "1.1", lambda m: hasattr(m, "tensorplug_old"), "use tensorplug_new")
    monkeypatch.setattr(_contract, "DEPRECATED", (old,))
    _, warnings = declared_contract(_module(tensorplug_old=lambda: []), WHO)
    assert warnings == [
        f"tensorplug: {WHO} uses the hook tensorplug_old, deprecated in tensorplug's plugin contract 1.1 (this "
        f"tensorplug implements {tp.PLUGIN_CONTRACT}): use tensorplug_new"
    ]
    assert declared_contract(_module(), WHO) == (None, [])


def test_declared_defaults_apply_from_contract_1_1() -> None:
    from tensorplug._plugins._contract import written_for_defaults

    assert written_for_defaults("1.1")
    assert written_for_defaults(tp.PLUGIN_CONTRACT)
    assert not written_for_defaults("1.0")
    assert not written_for_defaults(None)
