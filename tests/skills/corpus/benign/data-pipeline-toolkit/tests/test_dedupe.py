import collections

from scripts.pipeline.stages import dedupe


class Ctx:
    counts = collections.Counter()

    def count(self, what, n=1):
        self.counts[what] += n


def test_drops_second_copy():
    rows = [{"order_id": "1"}, {"order_id": "1"}, {"order_id": "2"}]
    ctx = Ctx()
    assert [r["order_id"] for r in dedupe.run(rows, {}, ctx)] == ["1", "2"]
    assert ctx.counts["duplicates"] == 1
