package shellexec

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"

	pb "shellexec/clients/go/gen/shellexec/v1"
)

// Feed is an open WatchMessages stream. Cancel the context given to Watch to stop it.
type Feed struct {
	stream grpc.ServerStreamingClient[pb.WatchMessagesResponse]
}

// Watch opens the session's feed of live events only. ctx bounds the whole stream (the
// client's default timeout does not apply: a feed lasts).
func (c *Client) Watch(ctx context.Context, sessionID string) (*Feed, error) {
	return c.watch(ctx, &pb.WatchMessagesRequest{SessionId: sessionID})
}

// WatchFrom opens the session's feed, first replaying every event after revision (0 replays
// all), then the live ones.
func (c *Client) WatchFrom(ctx context.Context, sessionID string, revision int32) (*Feed, error) {
	return c.watch(ctx, &pb.WatchMessagesRequest{SessionId: sessionID, SinceRevision: &revision})
}

func (c *Client) watch(ctx context.Context, request *pb.WatchMessagesRequest) (*Feed, error) {
	stream, err := c.stub.WatchMessages(ctx, request)
	if err != nil {
		return nil, fromRPC(err)
	}
	return &Feed{stream: stream}, nil
}

// Recv returns the next event; io.EOF once the server ended the stream (after its
// `end_of_stream`, `session_deleted` or `reset` event), an *Error when the stream failed
// (NOT_FOUND for an unknown session arrives here, on the first Recv).
func (f *Feed) Recv() (*pb.WatchMessagesResponse, error) {
	event, err := f.stream.Recv()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	return event, fromRPC(err)
}
