    # >>> TODO(coverage): the test's own solution (tests/starters/coverage.py)
    def tick(self, now):
        servers = self.servers.values()
        for srv in servers:
            srv.short = len(srv.streams) < srv.busy() + RESERVE
        want = 0
        for srv in servers:
            busy, idle = srv.busy(), srv.idle()
            if srv.evacuated_until > now:
                for s in idle:  # recycle: the new ones land elsewhere
                    s.close()
                want += len(idle)
                continue
            if not srv.short:
                srv.grow_last = 0
                srv.short_idle_since = None
            elif busy:
                srv.short_idle_since = None
                idle_elsewhere = sum(len(o.idle()) for o in servers if o is not srv and o.evacuated_until <= now)
                n = max(GROW_MIN, busy, busy + RESERVE - len(srv.streams), 2 * srv.grow_last)
                if idle_elsewhere >= PAUSE_FACTOR * busy:
                    n = 0
                n = max(0, min(n, CAP_PER_SERVER - len(srv.streams)))
                srv.grow_last = n
                want += n
            else:
                srv.grow_last = 0
                if srv.short_idle_since is None:
                    srv.short_idle_since = now
                others_covered = any(not o.short and o.evacuated_until <= now for o in servers if o is not srv)
                if (now - srv.short_idle_since >= OVERDUE and now - self.last_evacuation >= EVACUATE_EVERY
                        and others_covered):
                    self.last_evacuation = now
                    srv.evacuated_until = now + EVACUATED
                    srv.short_idle_since = None
                    for s in idle:
                        s.close()
                    want += len(idle)
                    continue
                want += min(RESERVE - len(srv.streams), FILL_PER_TICK)
            left = len(srv.streams)
            for s in sorted(idle, key=lambda s: s.last_used):
                if left <= busy + RESERVE:
                    break
                if now - s.opened >= PRUNE_AGE and now - s.last_used >= PRUNE_UNUSED:
                    s.close()
                    left -= 1
        self.open(want - self.pending)
    # <<< TODO
