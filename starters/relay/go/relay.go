// relay.go: your relay for the relaylab `deadline` and `cancel` exercises
// (`lab show deadline`, `lab show cancel`), in Go with grpc-go. The server
// is set up for you: it listens on $RELAYLAB_LISTEN, holds a client for the
// baseline at $RELAYLAB_BASELINE, and stops cleanly on SIGTERM. The lesson
// is yours: Process, the block between the TODO markers. `make` builds
// ./relay (`lab check` runs make first); `./run` starts it. The generated
// code is in gen/src/relaylab/pb (`lab stubs go .` makes it again).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "relaylab/pb"
)

type relay struct {
	pb.UnimplementedRelayServer
	// The baseline: r.baseline.Lookup(ctx, req) and r.baseline.Work(ctx,
	// req) return when the call has ended. The context you pass decides
	// the call's deadline and when it is cancelled.
	baseline pb.BaselineClient
}

// >>> TODO(deadline, cancel): relay one Process call.
//  1. Call Lookup with &pb.LookupRequest{Tag: req.Tag, DelayMs: req.LookupDelayMs},
//  2. then Work with &pb.WorkRequest{Tag: req.Tag, Steps: req.Steps, StepMs: req.StepMs},
//  3. and return &pb.ProcessReply{Tag: w.Tag, StepsDone: w.StepsDone} from Work's reply.
//
// deadline: each downstream call may take only the time the client has left,
// and has no deadline when the client set none. A failed downstream call
// fails Process with its status: return nil, err (grpc-go sends err's code).
// cancel: when the client gives up, cancel the call in flight and start no
// further one.
// In Go both rules are one choice: the context the downstream calls get.
// Process's ctx is done when the client's deadline passes or it cancels
// (ctx.Deadline() says which deadline it carries).
func (r *relay) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
	return nil, status.Error(codes.Unimplemented,
		"TODO in relay.go: Process does not call Lookup and Work yet (see its TODO block)")
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
	// Dial connects in the background; a call on it fails fast while the
	// baseline is unreachable.
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
	s := grpc.NewServer()
	pb.RegisterRelayServer(s, &relay{baseline: pb.NewBaselineClient(conn)})

	// SIGTERM (the grader's stop): take no new calls, give running ones 1 s,
	// then end them (Stop cancels their ctx), and exit 0.
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
