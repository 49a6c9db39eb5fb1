// relay.go: your relay for the relaylab `shutdown` exercise (`lab show
// shutdown`), in Go with grpc-go. The server is set up for you: it listens
// on $RELAYLAB_LISTEN and holds a client for the baseline at
// $RELAYLAB_BASELINE; Process is written too, a plain relay (Lookup, then
// Work) whose downstream calls run under a context of the relay's own, so
// that r.endAll() can cancel them. (The deadline and cancel rules are their
// own exercises and this grader does not judge them: bring your Process
// from them if you have it, and keep endAll's cancel reaching its calls.)
// The lesson is yours: what the relay does at SIGTERM, the block between the
// TODO markers in main. `make` builds ./relay (`lab check` runs make first);
// `./run` starts it. The generated code is in gen/src/relaylab/pb (`lab
// stubs go .` makes it again).
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "relaylab/pb"
)

type relay struct {
	pb.UnimplementedRelayServer
	baseline pb.BaselineClient
	// The downstream calls run under down; endAll cancels it.
	down       context.Context
	cancelDown context.CancelFunc
	mu         sync.Mutex
	endedBy    string // why endAll cut the calls: Process's answer then
}

// endAll cancels every downstream call in flight (the baseline sees its
// Work cancelled) and makes their Process calls, and any later one, fail
// UNAVAILABLE with |why|.
func (r *relay) endAll(why string) {
	r.mu.Lock()
	r.endedBy = why
	r.mu.Unlock()
	r.cancelDown()
}

// failed is Process's answer for a downstream call that failed with err.
func (r *relay) failed(err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.endedBy != "" {
		return status.Error(codes.Unavailable, r.endedBy)
	}
	return err
}

func (r *relay) Process(ctx context.Context, req *pb.ProcessRequest) (*pb.ProcessReply, error) {
	if _, err := r.baseline.Lookup(r.down, &pb.LookupRequest{Tag: req.Tag, DelayMs: req.LookupDelayMs}); err != nil {
		return nil, r.failed(err)
	}
	w, err := r.baseline.Work(r.down, &pb.WorkRequest{Tag: req.Tag, Steps: req.Steps, StepMs: req.StepMs})
	if err != nil {
		return nil, r.failed(err)
	}
	return &pb.ProcessReply{Tag: w.Tag, StepsDone: w.StepsDone}, nil
}

// grace is the time the platform gives between SIGTERM and SIGKILL
// (RELAYLAB_GRACE_MS; the grader sets it), 5 s when unset.
func grace() time.Duration {
	if ms, err := strconv.Atoi(os.Getenv("RELAYLAB_GRACE_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 5 * time.Second
}

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
	r.down, r.cancelDown = context.WithCancel(context.Background())
	s := grpc.NewServer()
	pb.RegisterRelayServer(s, r)

	// SIGTERM and SIGINT come here; stopped is closed once the server has
	// stopped, and main then returns (exit 0).
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	stopped := make(chan struct{})
	go func() {
		<-sigs
		// >>> TODO(shutdown): drain instead of cutting every call at once.
		//  1. Stop admitting and let the calls in flight finish:
		//     s.GracefulStop() closes the listener, sends connected clients a
		//     GOAWAY (new calls fail UNAVAILABLE) and returns once every call
		//     has ended and every connection closed: with no bound of its own.
		//  2. Bound it by the grace: at grace() after the signal
		//     (time.AfterFunc), end what still runs downstream
		//     (r.endAll(why)) and call s.Stop(), which cancels the calls still
		//     running and closes the connections; GracefulStop then returns.
		//  3. A second SIGTERM, or a SIGINT, means now.
		// Until then, the calls in flight are cut at once, no grace:
		r.endAll("TODO in relay.go: the SIGTERM handler cuts every call at once, with no grace (its TODO block)")
		force := time.AfterFunc(time.Second, s.Stop)
		s.GracefulStop()
		force.Stop()
		// <<< TODO
		close(stopped)
	}()
	fmt.Printf("relay listening on %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	<-stopped
}
