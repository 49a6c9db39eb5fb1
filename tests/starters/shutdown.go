		// >>> TODO(shutdown): the test's own solution (tests/starters/shutdown.go)
		// GracefulStop drains with no bound; the timer bounds it by the
		// grace (or a second signal, at once): the calls still downstream
		// are cancelled, then Stop ends their Process calls and closes the
		// connections, and GracefulStop returns.
		var once sync.Once
		now := func() {
			once.Do(func() {
				r.endAll("the relay stopped: its grace is over")
				s.Stop()
			})
		}
		force := time.AfterFunc(grace(), now)
		go func() {
			<-sigs
			now()
		}()
		s.GracefulStop()
		force.Stop()
		// <<< TODO
