"""Benchmarks of tensorplug against raw NumPy and raw PyTorch: the machinery of ``tensorplug bench``.

Imported only by that command (and by ``benchmarks/bench.py``), never by
``import tensorplug``. The modules:

- ``timing``: timeit loops calibrated to a duration, repeats of two workloads interleaved;
- ``references``: the workloads written without tensorplug (NumPy by hand, raw PyTorch eager);
- ``workloads``: the same workloads through tensorplug, on one backend, and the rows they yield;
- ``report``: the table on a terminal, the markdown file, the JSON rows;
- ``cli``: the command's arguments and its run function.
"""
