# coverage_early: answers every call the moment it is handed, without
# working its work_ms. Sized per server like coverage_good.py, but its
# streams are never busy for long, so one stream carries a whole burst and
# nothing queues: the bursts, rest and evacuation would all look served.
#
# Must fail every scenario with calls ("answered before the work?"): the
# judge compares each answer with the hand-over and the call's work_ms.
# Everything else is coverage_good.py's.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good  # noqa: E402


async def work_skipped(self, m):
    # BUG: no `await asyncio.sleep(m.work_ms / 1000.0)`: the answer goes out at once
    self.busy = False
    self.last_used = coverage_good.time.monotonic()
    await self.out.put(coverage_good.pb.TunnelAnswer(call_id=m.call_id))


coverage_good.Stream.work = work_skipped

if __name__ == "__main__":
    asyncio.run(coverage_good.main())
