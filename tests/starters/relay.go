// >>> TODO(deadline, cancel): the test's own solution (tests/starters/relay.go)
// Process's ctx carries the client's deadline and is done when the client
// goes: handed to the downstream calls, it gives each the time left, none
// when there is none, and cancels the call in flight.
func (r *relay) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
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
