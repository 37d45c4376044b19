"""A controlled shutdown (endmqm -c) waits for the writer's last cycle to land in place.

Under TripleWrite the forces whose records end on a rewritten partial page are released once
the page's spare copy is written, before the in-place write. The shutdown checkpoint's force
is one of them; had shutdown ended there, the log files would be left behind the spare file
(the newest image of the last page only in amqhlspr.lfh): restart still finds it, but an
ended queue manager's extents must hold its whole log (found on issue 38's branch, where the
last CheckpointEnd was missing from the extent a log scan read)."""

from __future__ import annotations

import pytest

from mqlog.core.disk.storage import MemoryStorage
from mqlog.core.format.pages import PAGE_HEADER_SIZE, PAGE_SIZE, check_page
from mqlog.core.workload.run import RunConfig, run_workload
from mqlog.core.workload.spec import BUILTINS, build_spec
from mqlog.distributed.space import SPARE_FILE
from mqlog.platforms import choose


@pytest.mark.parametrize("messages", [5, 40, 200])
def test_after_a_controlled_shutdown_the_extent_holds_the_newest_last_page(messages):
    choice = choose("distributed")
    values = choice.configure({"LogWriteIntegrity": "TripleWrite"})
    spec = build_spec(BUILTINS["putget-pairs"], {"pairs": "1", "messages_per_pair": str(messages),
                                                 "message_size": "512", "syncpoint": "false"}, origin="test")
    result = run_workload(RunConfig("distributed", choice.maker(values), values, spec, seed=1), MemoryStorage())
    assert not result.crashed
    writer = result.qm.writer
    assert writer.stats.partial_page_rewrites > 0  # the spare copy was in play (the scenario)
    end = writer.durable
    last_page = (end - 1) - (end - 1) % PAGE_SIZE
    raw, source, offset = writer.space.read_page(last_page)
    header, problem = check_page(raw, last_page)
    assert problem is None and source != SPARE_FILE, (source, offset)
    # and that page holds the log up to its end: the shutdown checkpoint's records included
    assert last_page + PAGE_HEADER_SIZE + header.used == end
