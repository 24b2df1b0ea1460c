package shellexec

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"

	pb "shellexec/clients/go/gen/shellexec/v1"
)

// Feed is an open WatchMessages stream. Close it (or cancel the context given to Watch) once
// done with it: until then the server holds the watcher, and a caller may hold 64 at once.
type Feed struct {
	stream grpc.ServerStreamingClient[pb.WatchMessagesResponse]
	cancel context.CancelFunc
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
	if err := requestText(request); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.stub.WatchMessages(ctx, request)
	if err != nil {
		cancel()
		return nil, fromRPC(err)
	}
	return &Feed{stream: stream, cancel: cancel}, nil
}

// Close ends the feed: the server lets go of the watcher at once. Recv then returns an error.
// Closing a feed more than once, or one the server ended, does nothing.
func (f *Feed) Close() {
	f.cancel()
}

// Recv returns the next event; io.EOF once the server ended the stream (after its
// `end_of_stream`, `session_deleted` or `reset` event), an *Error when the stream failed
// (NOT_FOUND for an unknown session arrives here, on the first Recv).
func (f *Feed) Recv() (*pb.WatchMessagesResponse, error) {
	event, err := f.stream.Recv()
	if err != nil {
		f.cancel() // the stream is over: its context goes too, Close or not
	}
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	return event, fromRPC(err)
}
