// >>> TODO(flow): the test's own solution (tests/starters/streamer.go)
// Send blocks while flow control holds the stream back: the loop makes the
// next chunk only once the last one has been taken.
func (s *streamer) Produce(req *pb.ProduceRequest, stream pb.Streamer_ProduceServer) error {
	if req.Size > 4*1024*1024-64 || req.Count > 1000000 {
		return status.Error(codes.InvalidArgument, "above the reference's limits")
	}
	for seq := uint64(0); seq < uint64(req.Count); seq++ {
		if err := stream.Send(&pb.Chunk{Seq: seq, Payload: payload(seq, req.Size)}); err != nil {
			return err
		}
	}
	return nil
}

// <<< TODO
