// coverage_one_stream: a tunnel agent that shares one stream for all its
// calls: it dials $RELAYLAB_TUNNEL, opens a single Tunnel.Open stream and
// works every call it is handed on it, one after the other. The server hands
// a stream one call at a time, so every call beyond the first waits at the
// server: no stream is ever added where the calls are.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"

	pb "relaylab/pb"
)

func oneStreamAgent() {
	target := os.Getenv("RELAYLAB_TUNNEL")
	if target == "" {
		fmt.Fprintln(os.Stderr, "known: RELAYLAB_TUNNEL is not set")
		os.Exit(2)
	}
	conn, err := grpc.Dial(target, grpc.WithInsecure())
	if err != nil {
		fmt.Fprintln(os.Stderr, "known:", err)
		os.Exit(1)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	ctx, cancel := context.WithCancel(context.Background())
	st, err := pb.NewTunnelClient(conn).Open(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "known:", err)
		os.Exit(1)
	}
	calls := make(chan *pb.TunnelCall)
	go func() {
		defer close(calls)
		for {
			m, err := st.Recv()
			if err != nil {
				return
			}
			if m.CallId != 0 { // the first message names the server
				calls <- m
			}
		}
	}()
	for {
		select {
		case m, ok := <-calls:
			if !ok {
				cancel()
				return
			}
			time.Sleep(time.Duration(m.WorkMs) * time.Millisecond)
			if st.Send(&pb.TunnelAnswer{CallId: m.CallId}) != nil {
				cancel()
				return
			}
		case <-sigs:
			st.CloseSend()
			select {
			case <-calls:
			case <-time.After(time.Second):
			}
			cancel()
			conn.Close()
			return
		}
	}
}
