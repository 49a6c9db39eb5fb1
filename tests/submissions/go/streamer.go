// The streamers: Produce sends Count chunks of Size bytes.
package main

import (
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "relaylab/pb"
)

var (
	patternMu sync.Mutex
	pattern   []byte // 0..250 repeated; only grows
)

// payload: the |size| bytes of chunk |seq|, (seq*31 + i) mod 251.
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

type produce func(req *pb.ProduceRequest, stream pb.Streamer_ProduceServer) error

type streamer struct {
	pb.UnimplementedStreamerServer
	produce produce
}

func streamerWith(p produce) func(*grpc.Server, pb.BaselineClient) {
	return func(s *grpc.Server, _ pb.BaselineClient) {
		pb.RegisterStreamerServer(s, &streamer{produce: p})
	}
}

func (st *streamer) Produce(req *pb.ProduceRequest, stream pb.Streamer_ProduceServer) error {
	if req.Size > 4*1024*1024-64 || req.Count > 1000000 {
		return status.Error(codes.InvalidArgument, "above the reference's limits")
	}
	return st.produce(req, stream)
}

// sendLoop: the rule. Send blocks while flow control holds the stream.
func sendLoop(req *pb.ProduceRequest, stream pb.Streamer_ProduceServer) error {
	for seq := uint64(0); seq < uint64(req.Count); seq++ {
		if err := stream.Send(&pb.Chunk{Seq: seq, Payload: payload(seq, req.Size)}); err != nil {
			return err
		}
	}
	return nil
}

// producerAhead: a goroutine makes every chunk into a channel with room for
// all of them ("so the producer never blocks") while the handler sends: a
// stalled reader leaves the whole stream in memory. Each chunk owns its
// bytes, as a producer that builds them does. The goroutine does stop when
// the call ends, so the cancel is not what it gets wrong.
func producerAhead(req *pb.ProduceRequest, stream pb.Streamer_ProduceServer) error {
	chunks := make(chan *pb.Chunk, req.Count)
	done := stream.Context().Done()
	go func() {
		defer close(chunks)
		for seq := uint64(0); seq < uint64(req.Count); seq++ {
			select {
			case <-done:
				return
			default:
			}
			p := append([]byte(nil), payload(seq, req.Size)...)
			chunks <- &pb.Chunk{Seq: seq, Payload: p}
		}
	}()
	for c := range chunks {
		if err := stream.Send(c); err != nil {
			return err
		}
	}
	return nil
}
