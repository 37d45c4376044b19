"""mqlog: a model of IBM MQ's recovery log on distributed platforms and z/OS.

The packages: :mod:`mqlog.core` (records, pages, storage, devices, the log writer),
:mod:`mqlog.distributed` and :mod:`mqlog.zos` (the platforms), :mod:`mqlog.spark` (jobs).
"""

from mqlog._version import __version__

__all__ = ["__version__"]
