# coverage_shortfall: sizes per server, but opens only the shortfall it
# can see (busy + 2 - streams: 2 while every stream is busy), never at
# least 8 nor doubling. The calls queued at the server are invisible to it,
# so the busy server grows by a stream or two a tick.
#
# Must fail coverage/burst-uniform and burst-skewed ("shortfall-only
# growth?"). Everything else is coverage_good.py's.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good  # noqa: E402

coverage_good.GROWTH = "shortfall"  # BUG

if __name__ == "__main__":
    asyncio.run(coverage_good.main())
