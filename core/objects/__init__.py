"""The queue manager's recoverable objects: queues and their messages (:mod:`.queues`), the
queue files a checkpoint flushes them to (:mod:`.queuefile`), units of work and the MQI's
reason codes (:mod:`.uow`) and media images of queues (:mod:`.media`)."""
