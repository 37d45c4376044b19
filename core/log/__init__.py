"""The log: the write-ahead buffer and its writer with group commit (:mod:`.writer`), reading
the log back (:mod:`.reader`), where pages go (:mod:`.space`: the protocol a platform's log
space implements, and the core's reference space), what a log address looks like
(:mod:`.addressing`) and the logger's statistics (:mod:`.stats`)."""
