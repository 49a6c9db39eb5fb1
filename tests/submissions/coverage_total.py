# coverage_total: the incident. It sizes its streams as one TOTAL across
# every server (covered when all its streams >= all its busy + 2) and
# leaves placement to the L7 proxy, so the server that gets a token's
# calls can hold a few of its streams, all busy, while idle streams sit on
# the others and nothing tells it to grow: calls queue there.
#
# Must fail coverage/burst-uniform and burst-skewed ("streams sized as a
# total?"); the rest may pass. Everything else is coverage_good.py's.
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coverage_good  # noqa: E402

coverage_good.SIZING = "total"  # BUG: one pool for every server

if __name__ == "__main__":
    asyncio.run(coverage_good.main())
