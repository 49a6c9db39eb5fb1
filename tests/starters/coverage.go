// >>> TODO(coverage): the test's own solution (tests/starters/coverage.go)
func (a *agent) tick(now time.Time) {
	short := map[*server]bool{}
	for _, srv := range a.servers {
		short[srv] = len(srv.streams) < srv.busy()+reserve
	}
	want := 0
	for _, srv := range a.servers {
		busy, idle := srv.busy(), srv.idle()
		if srv.evacuatedUntil.After(now) {
			for _, s := range idle { // recycle: the new ones land elsewhere
				s.close()
			}
			want += len(idle)
			continue
		}
		switch {
		case !short[srv]:
			srv.growLast = 0
			srv.shortIdleSince = time.Time{}
		case busy > 0:
			srv.shortIdleSince = time.Time{}
			idleElsewhere := 0
			for _, o := range a.servers {
				if o != srv && !o.evacuatedUntil.After(now) {
					idleElsewhere += len(o.idle())
				}
			}
			n := max(growMin, busy, busy+reserve-len(srv.streams), 2*srv.growLast)
			if idleElsewhere >= pauseFactor*busy {
				n = 0
			}
			if n > capPerServer-len(srv.streams) {
				n = capPerServer - len(srv.streams)
			}
			if n < 0 {
				n = 0
			}
			srv.growLast = n
			want += n
		default:
			srv.growLast = 0
			if srv.shortIdleSince.IsZero() {
				srv.shortIdleSince = now
			}
			othersCovered := false
			for _, o := range a.servers {
				if o != srv && !short[o] && !o.evacuatedUntil.After(now) {
					othersCovered = true
				}
			}
			if now.Sub(srv.shortIdleSince) >= overdue && othersCovered &&
				(a.lastEvacuation.IsZero() || now.Sub(a.lastEvacuation) >= evacuateEvery) {
				a.lastEvacuation = now
				srv.evacuatedUntil = now.Add(evacuated)
				srv.shortIdleSince = time.Time{}
				for _, s := range idle {
					s.close()
				}
				want += len(idle)
				continue
			}
			if n := reserve - len(srv.streams); n < fillPerTick {
				want += n
			} else {
				want += fillPerTick
			}
		}
		left := len(srv.streams)
		sort.Slice(idle, func(i, j int) bool { return idle[i].lastUsed.Before(idle[j].lastUsed) })
		for _, s := range idle {
			if left <= busy+reserve {
				break
			}
			if now.Sub(s.opened) >= pruneAge && now.Sub(s.lastUsed) >= pruneUnused {
				s.close()
				left--
			}
		}
	}
	a.open(want - a.pending)
}

func max(first int, rest ...int) int {
	for _, v := range rest {
		if v > first {
			first = v
		}
	}
	return first
}

// <<< TODO
