// The known Go (grpc-go 1.33) submissions, one program: `known NAME` runs the
// submission NAME (the table below), each a student's relay or streamer as
// it would be written, with its one mistake or none. scripts/selftest.py
// builds it once into build/go-known/ (run kind 'go:NAME' in
// tests/verdicts.json); `known list` prints the names.
//
// What every submission shares is here: the server on $RELAYLAB_LISTEN,
// the client for the baseline at $RELAYLAB_BASELINE, and the readiness
// line. Each NAME picks a service (relay.go, streamer.go, overload.go) and
// what it does at SIGTERM (shutdown.go); coverage_one_stream is a tunnel
// agent, a client that serves nothing (agent.go).
package main

import (
	"fmt"
	"net"
	"os"
	"sort"

	"google.golang.org/grpc"

	pb "relaylab/pb"
)

// submission is one known submission: what it serves and how it stops.
type submission struct {
	about    string
	register func(s *grpc.Server, baseline pb.BaselineClient)
	serve    func(s *grpc.Server, lis net.Listener) // serves; returns once stopped after SIGTERM
}

var submissions = map[string]submission{
	"relay_good": {"passes the handler's ctx to Lookup and Work; bounded GracefulStop",
		relayWith(passCtx), drainBounded},
	"relay_background": {"context.Background() for the downstream calls: no deadline, no cancel",
		relayWith(background), drainBounded},
	"relay_fixed_timeout": {"context.WithTimeout(context.Background(), 5s): a timeout of its own, detached",
		relayWith(fixedTimeout), drainBounded},
	"relay_deadline_copied": {"context.WithDeadline(context.Background(), d): the deadline right, the cancel lost",
		relayWith(deadlineCopied), drainBounded},
	"shutdown_good":     {"GracefulStop, bounded by RELAYLAB_GRACE_MS with Stop", relayWith(passCtx), drainBounded},
	"shutdown_stop_now": {"s.Stop() at SIGTERM: no grace", relayWith(passCtx), stopNow},
	"shutdown_graceful_unbounded": {"GracefulStop alone: waits for every call and connection, with no bound",
		relayWith(passCtx), drainUnbounded},
	"shutdown_listener_only": {"closes the listener and waits for its calls: no GOAWAY, the connections keep serving",
		relayWith(passCtx), listenerOnly},
	"streamer_good": {"a loop of stream.Send, paced by flow control", streamerWith(sendLoop), drainBounded},
	"streamer_unbounded": {"a goroutine fills a channel of Count chunks ahead of Send",
		streamerWith(producerAhead), drainBounded},
	"overload_good": {"an admission gate in front of the ctx-passing relay", overloadRelay, drainBounded},
}

func main() {
	if len(os.Args) != 2 || os.Args[1] == "list" {
		names := make([]string, 0, len(submissions))
		for n := range submissions {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Printf("%-28s %s\n", n, submissions[n].about)
		}
		fmt.Printf("%-28s %s\n", "coverage_one_stream", "a tunnel agent that shares one stream for all its calls")
		if len(os.Args) != 2 {
			os.Exit(2)
		}
		return
	}
	if os.Args[1] == "coverage_one_stream" {
		oneStreamAgent()
		return
	}
	sub, ok := submissions[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "known: no submission %q (known list)\n", os.Args[1])
		os.Exit(2)
	}
	listen := os.Getenv("RELAYLAB_LISTEN")
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	var baseline pb.BaselineClient
	if addr := os.Getenv("RELAYLAB_BASELINE"); addr != "" {
		conn, err := grpc.Dial(addr, grpc.WithInsecure())
		if err != nil {
			fmt.Fprintln(os.Stderr, "known:", err)
			os.Exit(1)
		}
		baseline = pb.NewBaselineClient(conn)
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "known: cannot listen:", err)
		os.Exit(1)
	}
	s := grpc.NewServer()
	sub.register(s, baseline)
	fmt.Printf("%s listening on %s\n", os.Args[1], lis.Addr())
	sub.serve(s, lis)
}
