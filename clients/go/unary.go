package shellexec

import (
	"context"

	"google.golang.org/grpc"
)

// unary makes one call of a generated stub method under the client's default timeout and
// turns a failure into an *Error.
func unary[Request, Response any](c *Client, ctx context.Context, request Request,
	call func(context.Context, Request, ...grpc.CallOption) (Response, error)) (Response, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	response, err := call(ctx, request)
	return response, fromRPC(err)
}
