"""``python -m tensorplug.kernel_reference``: print the whole page (or the entries of the kernels named)."""

from tensorplug.kernel_reference import main

raise SystemExit(main())
