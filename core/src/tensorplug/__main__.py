"""``python -m tensorplug``: the ``tensorplug`` command."""

from tensorplug._cli import main

raise SystemExit(main())
