  // >>> TODO(coverage): the test's own solution (tests/starters/coverage.js)
  tick(t) {
    const servers = [...this.servers.values()];
    for (const srv of servers) srv.short = srv.streams.length < srv.busy() + RESERVE;
    let want = 0;
    for (const srv of servers) {
      const busy = srv.busy();
      const idle = srv.idle();
      if (srv.evacuatedUntil > t) {
        for (const s of idle) s.close(); // recycle: the new ones land elsewhere
        want += idle.length;
        continue;
      }
      if (!srv.short) {
        srv.growLast = 0;
        srv.shortIdleSince = null;
      } else if (busy > 0) {
        srv.shortIdleSince = null;
        let idleElsewhere = 0;
        for (const o of servers) if (o !== srv && o.evacuatedUntil <= t) idleElsewhere += o.idle().length;
        let n = Math.max(GROW_MIN, busy, busy + RESERVE - srv.streams.length, 2 * srv.growLast);
        if (idleElsewhere >= PAUSE_FACTOR * busy) n = 0;
        n = Math.max(0, Math.min(n, CAP_PER_SERVER - srv.streams.length));
        srv.growLast = n;
        want += n;
      } else {
        srv.growLast = 0;
        if (srv.shortIdleSince === null) srv.shortIdleSince = t;
        const othersCovered = servers.some((o) => o !== srv && !o.short && o.evacuatedUntil <= t);
        if (t - srv.shortIdleSince >= OVERDUE_MS && t - this.lastEvacuation >= EVACUATE_EVERY_MS && othersCovered) {
          this.lastEvacuation = t;
          srv.evacuatedUntil = t + EVACUATED_MS;
          srv.shortIdleSince = null;
          for (const s of idle) s.close();
          want += idle.length;
          continue;
        }
        want += Math.min(RESERVE - srv.streams.length, FILL_PER_TICK);
      }
      let left = srv.streams.length;
      for (const s of [...idle].sort((a, b) => a.lastUsed - b.lastUsed)) {
        if (left <= busy + RESERVE) break;
        if (t - s.opened >= PRUNE_AGE_MS && t - s.lastUsed >= PRUNE_UNUSED_MS) {
          s.close();
          left--;
        }
      }
    }
    this.open(want - this.pending);
  }
  // <<< TODO
