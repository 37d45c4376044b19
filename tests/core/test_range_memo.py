"""The log spaces' address-to-file memo (core/log/space.py's RangeMemo): one lookup serves
every address of the range it answers for, until the space says the mapping changed."""

from __future__ import annotations

from mqlog.core.log.space import RangeMemo


class Files:
    """Files of 100 addresses each, from 0; asks counted. ``overlapping`` answers without a range."""

    def __init__(self):
        self.asked = []
        self.names = {0: "A", 100: "B"}
        self.overlapping = set()

    def lookup(self, address):
        self.asked.append(address)
        first = address - address % 100
        if first not in self.names:
            return None
        end = first if first in self.overlapping else first + 100
        return self.names[first], first, end


def test_one_lookup_serves_the_whole_range_it_answers_for():
    files = Files()
    memo = RangeMemo(files.lookup)
    assert [memo.get(a) for a in (0, 5, 99, 100, 150, 199)] == ["A", "A", "A", "B", "B", "B"]
    assert files.asked == [0, 100]


def test_no_file_is_none_and_keeps_what_was_remembered():
    files = Files()
    memo = RangeMemo(files.lookup)
    assert memo.get(10) == "A"
    assert memo.get(250) is None
    assert memo.get(20) == "A" and files.asked == [10, 250]


def test_an_empty_range_answers_that_address_only():
    files = Files()
    files.overlapping.add(100)
    memo = RangeMemo(files.lookup)
    assert memo.get(120) == "B" and memo.get(121) == "B"
    assert files.asked == [120, 121]


def test_forget_looks_up_again_after_the_mapping_changed():
    files = Files()
    memo = RangeMemo(files.lookup)
    assert memo.get(10) == "A"
    files.names[0] = "C"  # the file at 0 now holds another range
    assert memo.get(11) == "A"  # not told yet
    memo.forget()
    assert memo.get(12) == "C" and files.asked == [10, 12]
