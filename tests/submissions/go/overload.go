// overload_good: the ctx-passing relay behind an admission gate: at most
// maxInflight calls downstream, at most maxQueue waiting, and none admitted
// whose deadline cannot cover the expected wait and its own service.
package main

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "relaylab/pb"
)

const (
	maxInflight = 8
	maxQueue    = 16
	slack       = 50 * time.Millisecond
)

type gate struct {
	mu       sync.Mutex
	inflight int
	waiting  int
	service  time.Duration // rises at once, falls slowly
	freed    chan struct{} // closed and made anew when a slot frees
}

func (g *gate) needed() time.Duration { return g.service*3/2 + slack }

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
	if has && time.Until(deadline) < time.Duration(g.waiting/maxInflight+1)*g.service+g.needed() {
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
	if took > g.service {
		g.service = took
	} else {
		g.service = (4*g.service + took) / 5
	}
	close(g.freed)
	g.freed = make(chan struct{})
}

type gated struct {
	relay
	gate gate
}

func overloadRelay(s *grpc.Server, baseline pb.BaselineClient) {
	r := &gated{relay: relay{baseline: baseline, down: passCtx}}
	r.gate.freed = make(chan struct{})
	pb.RegisterRelayServer(s, r)
}

func (r *gated) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
	if err := r.gate.enter(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() { r.gate.leave(time.Since(start)) }()
	return r.relay.Process(ctx, req)
}
