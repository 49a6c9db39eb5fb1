// What each submission does at SIGTERM. Each serves until the signal and
// returns (exit 0) once its server stopped; the relays pass the handler's
// ctx downstream, so Stop, which cancels the calls still running, cancels
// their downstream calls too.
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"google.golang.org/grpc"
)

// grace is RELAYLAB_GRACE_MS, 5 s when unset.
func grace() time.Duration {
	if ms, err := strconv.Atoi(os.Getenv("RELAYLAB_GRACE_MS")); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return 5 * time.Second
}

// serveUntil serves on lis in a goroutine and calls stop at the first
// SIGTERM or SIGINT (with the signal channel, for a second one); returns
// when stop has.
func serveUntil(s *grpc.Server, lis net.Listener, stop func(sigs chan os.Signal)) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		if err := s.Serve(lis); err != nil {
			fmt.Fprintln(os.Stderr, "known:", err)
		}
	}()
	<-sigs
	stop(sigs)
}

// drainBounded: the rule. GracefulStop, and Stop at the grace or a second
// signal.
func drainBounded(s *grpc.Server, lis net.Listener) {
	serveUntil(s, lis, func(sigs chan os.Signal) {
		force := time.AfterFunc(grace(), s.Stop)
		go func() {
			<-sigs
			s.Stop()
		}()
		s.GracefulStop()
		force.Stop()
	})
}

// stopNow: Stop at the signal fails every call in flight.
func stopNow(s *grpc.Server, lis net.Listener) {
	serveUntil(s, lis, func(chan os.Signal) { s.Stop() })
}

// drainUnbounded: GracefulStop waits for every call, however long.
func drainUnbounded(s *grpc.Server, lis net.Listener) {
	serveUntil(s, lis, func(chan os.Signal) { s.GracefulStop() })
}

// listenerOnly: closes the listener (Serve returns) and waits the grace
// for its calls, but never tells the connected clients: their connections
// keep taking new calls.
func listenerOnly(s *grpc.Server, lis net.Listener) {
	serveUntil(s, lis, func(chan os.Signal) {
		lis.Close()
		time.Sleep(grace())
		s.Stop()
	})
}
