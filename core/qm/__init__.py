"""The queue manager in normal running: its lifecycle, the MQI calls applications make,
logging on their behalf, checkpoints and the log-space reserve (:mod:`.manager`)."""
