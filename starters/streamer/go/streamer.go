// streamer.go: your producer for the relaylab `flow` exercise (`lab show
// flow`), in Go with grpc-go. The server is set up for you: it listens on
// $RELAYLAB_LISTEN and stops cleanly on SIGTERM, and payload() makes a
// chunk's bytes. The lesson is yours: Produce, the block between the TODO
// markers. `make` builds ./streamer (`lab check` runs make first); `./run`
// starts it. The generated code is in gen/src/relaylab/pb (`lab stubs go .`
// makes it again).
package main

import (
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

// pattern repeats 0..250: payload[i] = (seq*31 + i) mod 251 makes every
// chunk a slice of it. It only grows, under patternMu (calls run at once).
var (
	patternMu sync.Mutex
	pattern   []byte
)

// payload returns the |size| payload bytes of chunk |seq|, as the handout
// defines them (a slice of a shared array: do not write to it).
func payload(seq uint64, size uint32) []byte {
	patternMu.Lock()
	if len(pattern) < 251+int(size) {
		grown := make([]byte, 251+int(size))
		for i := range grown {
			grown[i] = byte(i % 251)
		}
		pattern = grown
	}
	p := pattern
	patternMu.Unlock()
	start := int(seq * 31 % 251)
	return p[start : start+int(size)]
}

type streamer struct {
	pb.UnimplementedStreamerServer
}

// >>> TODO(flow): send req.Count chunks, &pb.Chunk{Seq: seq, Payload: payload(seq, req.Size)}
// for seq = 0 .. Count-1, in order, with stream.Send, then return nil (the
// stream ends OK).
// Make the next chunk only when the previous one has gone: stream.Send
// blocks while flow control holds the stream back, so a loop that calls it
// is paced by the client; a goroutine filling a channel ahead of it is not.
// Stop when the client cancels: Send returns an error, and
// stream.Context() is done.
// Refuse what you cannot serve: Size above 4 MiB - 64 or Count above
// 1,000,000 with codes.InvalidArgument, as the reference does.
func (s *streamer) Produce(req *pb.ProduceRequest, stream pb.Streamer_ProduceServer) error {
	return status.Error(codes.Unimplemented, "TODO in streamer.go: Produce sends no chunks yet (see its TODO block)")
}

// <<< TODO

func main() {
	listen := os.Getenv("RELAYLAB_LISTEN")
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "streamer: cannot listen:", err)
		os.Exit(1)
	}
	// Chunks up to 4 MiB: grpc-go sends at most 4 MiB per message by
	// default, as the other stacks do.
	s := grpc.NewServer()
	pb.RegisterStreamerServer(s, &streamer{})

	// SIGTERM (the grader's stop): take no new calls, give running ones 1 s,
	// then end them (Stop cancels their context), and exit 0.
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
	fmt.Printf("streamer listening on %s\n", lis.Addr())
	if err := s.Serve(lis); err != nil {
		fmt.Fprintln(os.Stderr, "streamer:", err)
		os.Exit(1)
	}
	<-stopped
}
