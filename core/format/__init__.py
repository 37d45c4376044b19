"""The record format: what a log record is in bytes (the :mod:`.records` package; its decoders
make records quickly through :mod:`.construct`) and how records are laid into 4 KiB log pages
(:mod:`.pages`). Nothing here knows where pages go or when they are written."""
