package shellexec

import (
	"context"

	"google.golang.org/grpc"
)

// unary makes one call of a generated stub method under the client's default timeout and
// turns a failure into an *Error. A request string that is not UTF-8 is refused before it is
// sent, naming its field (text.go).
func unary[Request, Response any](c *Client, ctx context.Context, request Request,
	call func(context.Context, Request, ...grpc.CallOption) (Response, error)) (Response, error) {
	if err := requestText(request); err != nil {
		var none Response
		return none, err
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	response, err := call(ctx, request)
	return response, fromRPC(err)
}
