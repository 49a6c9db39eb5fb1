// relay.go: your relay for the relaylab `overload` exercise (`lab show
// overload`), in Go with grpc-go. The server is set up for you: it listens
// on $RELAYLAB_LISTEN, holds a fail-fast client for the baseline at
// $RELAYLAB_BASELINE, keeps the state an admission gate needs, and stops on
// SIGTERM. Process is given too, a plain relay (Lookup, then Work) that
// passes every call through the gate around its downstream calls: it
// drops the client's deadline and lets the downstream calls run on after
// the client left. (The deadline and cancel rules are their own exercises,
// and this one judges them too: bring your Process from them.) The lesson
// is yours, the block between the TODO markers: Process with those rules,
// and admission control, enter() and leave(). `make` builds ./relay (`lab
// check` runs make first); `./run` starts it. The generated code is in
// gen/src/relaylab/pb (`lab stubs go .` makes it again).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "relaylab/pb"
)

const (
	maxInflight = 8                     // Process calls with a downstream call in flight at once
	maxQueue    = 16                    // calls waiting for one of those slots
	slack       = 50 * time.Millisecond // what a loaded machine adds to a call's way through the relay
)

// gate is the admission state, shared by every Process call's goroutine
// (grpc-go runs each call in one of its own: it has no queue of its own,
// so the gate's queue is the only one).
type gate struct {
	mu       sync.Mutex    // guards what follows
	inflight int           // calls holding a slot (at most maxInflight)
	waiting  int           // calls waiting for a slot (at most maxQueue)
	service  time.Duration // how long the backend holds a call: see served()
	freed    chan struct{} // closed, and made anew, each time a slot frees: see slotFreed()
}

// served counts one call's service time into g.service (call it with g.mu
// held): a moving average that rises at once when a call took longer (a
// slowing backend must not fill the queue while the average catches up) and
// comes down slowly. A blackholed backend holds calls until their deadline,
// and that is what a waiting call can expect too.
func (g *gate) served(took time.Duration) {
	if took > g.service {
		g.service = took
	} else {
		g.service = (4*g.service + took) / 5
	}
}

// slotFreed wakes every call waiting on g.freed (call it with g.mu held).
// A waiting call takes the channel under g.mu, releases g.mu and waits on
// it (with a select, beside its ctx.Done() and a timer).
func (g *gate) slotFreed() {
	close(g.freed)
	g.freed = make(chan struct{})
}

type relay struct {
	pb.UnimplementedRelayServer
	// The baseline: r.baseline.Lookup(ctx, req) and r.baseline.Work(ctx,
	// req) return when the call has ended; the context decides its deadline
	// and when it is cancelled. Fail-fast: with the backend down, a call
	// fails UNAVAILABLE at once (grpc.WaitForReady(true) would hold it).
	baseline pb.BaselineClient
	gate     gate
}

// >>> TODO(overload): Process with the deadline and cancel rules, and admission control.
// Process: bring yours from the deadline and cancel exercises (each
// downstream call with only the time left, none without a client deadline;
// the client leaving cancels the call in flight and starts no further one:
// in Go, the context the calls get); it calls enter(ctx) before its first
// downstream call and leave(took) after its last, with how long the backend
// held it.
// enter(ctx) returns nil once the call holds one of the maxInflight slots,
// or an error that refuses it: status.Error(codes.ResourceExhausted, why),
// which Process returns, going no further.
//  1. A slot free and no call waiting: take it.
//  2. Otherwise refuse at once when maxQueue calls wait already, or when the
//     time left (ctx.Deadline(); none: no deadline) cannot cover the
//     expected wait (the calls ahead, maxInflight at a time, each
//     g.service) plus this call's own service and the slack.
//  3. Else wait for a slot (on g.freed, waking now and then to look at the
//     clock). Leave the queue, refused, as soon as the time left no longer
//     covers the service, or the client has gone (ctx.Done()): a call the
//     relay cannot serve in time is never forwarded.
//
// leave(took) gives the slot back, counts took (g.served) and wakes the
// waiting calls (g.slotFreed()).
// Until then, Process is a plain relay and the gate lets one call through
// at a time and refuses the rest:
func (g *gate) enter(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inflight == 0 {
		g.inflight++
		return nil
	}
	return status.Error(codes.ResourceExhausted,
		"TODO in relay.go: no admission control yet, the gate takes one call at a time (its TODO block)")
}

func (g *gate) leave(took time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	g.served(took)
}

func (r *relay) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
	if err := r.gate.enter(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	defer func() { r.gate.leave(time.Since(start)) }()
	down := context.Background()
	if _, err := r.baseline.Lookup(down, &pb.LookupRequest{Tag: req.Tag, DelayMs: req.LookupDelayMs}); err != nil {
		return nil, err
	}
	w, err := r.baseline.Work(down, &pb.WorkRequest{Tag: req.Tag, Steps: req.Steps, StepMs: req.StepMs})
	if err != nil {
		return nil, err
	}
	return &pb.ProcessReply{Tag: w.Tag, StepsDone: w.StepsDone}, nil
}

// <<< TODO

func main() {
	listen := os.Getenv("RELAYLAB_LISTEN")
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	baseline := os.Getenv("RELAYLAB_BASELINE")
	if baseline == "" {
		fmt.Fprintln(os.Stderr, "relay: set RELAYLAB_BASELINE=host:port (where the baseline listens)")
		os.Exit(1)
	}
	conn, err := grpc.Dial(baseline, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay: cannot listen:", err)
		os.Exit(1)
	}
	r := &relay{baseline: pb.NewBaselineClient(conn)}
	r.gate.freed = make(chan struct{})
	s := grpc.NewServer()
	pb.RegisterRelayServer(s, r)

	// SIGTERM (the grader's stop): take no new calls, give running ones 1 s,
	// then end them, and exit 0. (Draining within the platform's grace is
	// the shutdown exercise.)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	stopped := make(chan struct{})
	go func() {
		<-sigs
		force := time.AfterFunc(time.Second, s.Stop)
		s.GracefulStop()
		force.Stop()
		close(stopped)
	}()
	fmt.Printf("relay listening on %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	<-stopped
}
