# coverage_linear: sizes per server, but grows by a fixed 8 streams a tick
# while a server is short, instead of doubling: only a share of new streams
# lands on the busy server, so its calls queue for seconds.
#
# Must fail coverage/burst-uniform and burst-skewed ("linear growth?").
# Everything else is coverage_good.py's.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good  # noqa: E402

coverage_good.GROWTH = "linear"  # BUG

if __name__ == "__main__":
    asyncio.run(coverage_good.main())
