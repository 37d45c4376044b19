"""What the log is written to: files (:mod:`.storage`: in memory or in a directory, with
real fsyncs), faults injected into them (:mod:`.faults`: crashes, torn and lost writes, bit
flips, full disks) and the devices that make writing take virtual time (:mod:`.devices`)."""
