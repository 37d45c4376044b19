"""run_tasks: every task a Spark task, as many at once as there are cores, results as they end."""

from __future__ import annotations

import pytest

from mqlog.core.errors import MqlogError
from mqlog.spark.session import run_tasks


def test_tasks_run_at_the_same_time(spark, tmp_path):
    """Two tasks that each wait for the other both meet only if they run at once (local[2]):
    one task at a time, the first gives up waiting."""

    def meet(i):
        import time

        (tmp_path / str(i)).touch()
        for _ in range(600):  # (a bound on the wait, not a speed check)
            if (tmp_path / str(1 - i)).exists():
                return True
            time.sleep(0.05)
        return False

    seen = []
    results = run_tasks(spark, [0, 1], meet, what="a test task", progress=lambda r, done, total: seen.append(
        (done, total)))
    assert results == [True, True] and seen == [(1, 2), (2, 2)]


def test_a_task_failing_with_mqlogs_own_error_is_that_error_in_one_line(spark):
    def task(i):
        from mqlog.core.errors import ParameterError

        if i == 1:
            raise ParameterError("budget", -1, "an integer >= 1")
        return i

    with pytest.raises(MqlogError, match="^a test task: .*budget") as info:
        run_tasks(spark, [0, 1, 2], task, what="a test task")
    assert "\n" not in str(info.value)
