"""The workload simulation that drives a queue manager: workload specs (:mod:`.spec`),
message payloads (:mod:`.payload`), the built-in workloads (:mod:`.workloads`), the
applications' journal of what they were told (:mod:`.journal`), one run in virtual time
(:mod:`.run`), recorded runs for fault campaigns (:mod:`.recording`) and a spec's expected
wall time (:mod:`.estimate`)."""
