"""``python -m tensorplug``: the ``tensorplug`` command."""

from tensorplug._tools._cli import main

raise SystemExit(main())
