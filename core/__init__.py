"""The transactional core both platforms share, in layers (each may import only those below):

* :mod:`.workload` – the workload simulation that drives a queue manager in virtual time;
* :mod:`.qm` – the queue manager in normal running;
* :mod:`.recovery` – restart: redo, undo with compensation records, media recovery;
* :mod:`.objects` – queues, queue files, units of work, media images;
* :mod:`.platform` – the plug-in interface a platform implements, and the core's reference
  platform;
* :mod:`.log` – the write-ahead buffer and writer, the reader, log spaces and addresses;
* :mod:`.format` and :mod:`.disk` – records and pages; files, faults and devices;
* :mod:`.errors` – the exceptions everything above raises.

The core names no platform: platforms plug in through :mod:`.platform`.
"""
