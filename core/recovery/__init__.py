"""Restart recovery: find the last checkpoint, redo the log forward from it, undo what was
in flight with compensation records, and re-create damaged queues from media images. The
driver is :mod:`.restart`; one recovery run's state and costs are :mod:`.state`'s, built
from the forward pass (:mod:`.redo`) and the backward one (:mod:`.undo`); media recovery is
:mod:`.media`, and what a restart reports :mod:`.outcome`."""
