"""The host the queue manager runs on: its cores and what each MQI call costs in CPU
(:mod:`.profiles`: host profiles as data, ``hosts.toml``, and the simulated CPU that
charges them)."""
