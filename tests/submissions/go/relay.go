// The relays: Process is Lookup then Work under a context each submission
// makes from the handler's own (or not).
package main

import (
	"context"
	"time"

	"google.golang.org/grpc"

	pb "relaylab/pb"
)

// downstream makes the context for the downstream calls from the handler's
// ctx, and the function that releases it.
type downstream func(ctx context.Context) (context.Context, context.CancelFunc)

// passCtx: the right answer. The handler's ctx carries the client's deadline
// and is done when the client goes.
func passCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return ctx, func() {}
}

// background: no deadline and no cancel reach the baseline.
func background(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.Background(), func() {}
}

// fixedTimeout: "every call gets 5 s", whatever the client has left.
func fixedTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 5*time.Second)
}

// deadlineCopied: the deadline is carried over by hand, onto a context that
// no cancel of the client's reaches.
func deadlineCopied(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(context.Background(), d)
	}
	return context.WithCancel(context.Background())
}

type relay struct {
	pb.UnimplementedRelayServer
	baseline pb.BaselineClient
	down     downstream
}

func relayWith(down downstream) func(*grpc.Server, pb.BaselineClient) {
	return func(s *grpc.Server, baseline pb.BaselineClient) {
		pb.RegisterRelayServer(s, &relay{baseline: baseline, down: down})
	}
}

// Process as a student writes it: no check between the calls (a call made
// with a context that is already done fails at once, unsent).
func (r *relay) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
	down, cancel := r.down(ctx)
	defer cancel()
	if _, err := r.baseline.Lookup(down, &pb.LookupRequest{Tag: req.Tag, DelayMs: req.LookupDelayMs}); err != nil {
		return nil, err
	}
	w, err := r.baseline.Work(down, &pb.WorkRequest{Tag: req.Tag, Steps: req.Steps, StepMs: req.StepMs})
	if err != nil {
		return nil, err
	}
	return &pb.ProcessReply{Tag: w.Tag, StepsDone: w.StepsDone}, nil
}
