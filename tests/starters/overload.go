// >>> TODO(overload): the test's own solution (tests/starters/overload.go)
// Process as tests/starters/relay.go has it, between enter() and leave().

// needed is what a call must have left once it has a slot: the service and
// half of it again, for its variation, and the machine's slack.
func (g *gate) needed() time.Duration {
	return g.service*3/2 + slack
}

func (g *gate) enter(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight < maxInflight && g.waiting == 0 {
		g.inflight++
		return nil
	}
	deadline, has := ctx.Deadline()
	if g.waiting >= maxQueue {
		return status.Errorf(codes.ResourceExhausted, "overloaded: %d calls wait already", g.waiting)
	}
	wait := time.Duration(g.waiting/maxInflight+1) * g.service
	if has && time.Until(deadline) < wait+g.needed() {
		return status.Error(codes.ResourceExhausted, "overloaded: the wait would outlast the deadline")
	}
	g.waiting++
	defer func() { g.waiting-- }()
	for g.inflight >= maxInflight {
		if ctx.Err() != nil || (has && time.Until(deadline) < g.needed()) {
			return status.Error(codes.ResourceExhausted, "overloaded: the call can no longer be served in time")
		}
		freed := g.freed
		g.mu.Unlock()
		look := time.NewTimer(50 * time.Millisecond)
		select {
		case <-freed:
		case <-ctx.Done():
		case <-look.C:
		}
		look.Stop()
		g.mu.Lock()
	}
	g.inflight++
	return nil
}

func (g *gate) leave(took time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	g.served(took)
	g.slotFreed()
}

func (r *relay) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
	if err := r.gate.enter(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() { r.gate.leave(time.Since(start)) }()
	if _, err := r.baseline.Lookup(ctx, &pb.LookupRequest{Tag: req.Tag, DelayMs: req.LookupDelayMs}); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, status.Error(codes.Canceled, "the client went away")
	}
	w, err := r.baseline.Work(ctx, &pb.WorkRequest{Tag: req.Tag, Steps: req.Steps, StepMs: req.StepMs})
	if err != nil {
		return nil, err
	}
	return &pb.ProcessReply{Tag: w.Tag, StepsDone: w.StepsDone}, nil
}

// <<< TODO
