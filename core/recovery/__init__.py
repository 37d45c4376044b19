"""Restart recovery: find the last checkpoint, redo the log forward from it, undo what was
in flight with compensation records, and re-create damaged queues from media images
(:mod:`.restart`)."""
