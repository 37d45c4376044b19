"""The distributed (Linux/UNIX/Windows) platform: the qm.ini log, circular ring and linear
stream of extents, LogWriteIntegrity, the log-space rules and media images."""
