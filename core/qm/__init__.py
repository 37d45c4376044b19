"""The queue manager in normal running: its lifecycle and the MQI calls applications make
(:mod:`.manager`, with :mod:`.connection` and :mod:`.config`), units of work and syncpoint
(:mod:`.syncpoint`, their table :mod:`.uowtable`), the log-space reserve and the log-full episode
(:mod:`.logspace`), checkpoints and their schedule (:mod:`.checkpointing`), shunting
(:mod:`.shunting`), and the services object it hands to platforms (:mod:`.services`)."""
