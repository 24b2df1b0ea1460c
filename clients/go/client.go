package shellexec

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "shellexec/clients/go/gen/shellexec/v1"
)

// MaxMessageBytes is the gRPC message limit of the service (docs/api.md, "Limits").
const MaxMessageBytes = 16 * 1024 * 1024

// DefaultTimeout bounds a unary call whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// MaxReconnectDelay is the longest wait between two attempts to reconnect after an outage.
// gRPC's own backoff grows to 120 s, so a client kept failing UNAVAILABLE for up to ~17 s
// (longer after a longer outage) once the service was back; the Python and Java clients bound
// it alike.
const MaxReconnectDelay = 5 * time.Second

// connectParams are gRPC's defaults for connecting, with the backoff between reconnects
// bounded by MaxReconnectDelay. MinConnectTimeout is gRPC's default too: left 0, it would cut
// each attempt to connect to the length of its backoff.
func connectParams() grpc.ConnectParams {
	bounded := backoff.DefaultConfig
	bounded.MaxDelay = MaxReconnectDelay
	return grpc.ConnectParams{Backoff: bounded, MinConnectTimeout: 20 * time.Second}
}

// Client calls one shellexec server. It is safe for concurrent use.
type Client struct {
	conn    *grpc.ClientConn
	stub    pb.ShellExecServiceClient
	timeout time.Duration
}

type settings struct {
	token       string
	timeout     time.Duration
	dialOptions []grpc.DialOption
}

// Option configures Dial.
type Option func(*settings)

// WithToken sends `authorization: Bearer <token>` with every call (needed when the service
// has authentication on); "" sends none. Dial refuses a token no header can carry: more than
// MaxBearerTokenChars characters, or any but visible ASCII (a line feed read with it from a
// file), saying what is wrong and never what the token is.
func WithToken(token string) Option {
	return func(s *settings) { s.token = token }
}

// WithTimeout replaces DefaultTimeout for unary calls whose context has no deadline; 0 is no
// deadline at all. Dial refuses a negative one.
func WithTimeout(timeout time.Duration) Option {
	return func(s *settings) { s.timeout = timeout }
}

// WithDialOptions adds gRPC dial options, e.g. transport credentials for TLS; they come
// after the client's own plaintext default and bounded reconnect backoff, so they win.
func WithDialOptions(options ...grpc.DialOption) Option {
	return func(s *settings) { s.dialOptions = append(s.dialOptions, options...) }
}

// Dial connects lazily to target (host:port), plaintext unless WithDialOptions says
// otherwise; Close releases the connection. After an outage it tries to reconnect at least
// every MaxReconnectDelay. It fails at once for a token or a timeout it cannot use.
func Dial(target string, options ...Option) (*Client, error) {
	chosen := settings{timeout: DefaultTimeout}
	for _, option := range options {
		option(&chosen)
	}
	if err := chosen.check(); err != nil {
		return nil, err
	}
	dialOptions := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes),
			grpc.MaxCallSendMsgSize(MaxMessageBytes)),
		grpc.WithConnectParams(connectParams()),
	}
	if chosen.token != "" {
		dialOptions = append(dialOptions, bearerToken(chosen.token)...)
	}
	conn, err := grpc.NewClient(target, append(dialOptions, chosen.dialOptions...)...)
	if err != nil {
		return nil, err
	}
	return &Client{conn: conn, stub: pb.NewShellExecServiceClient(conn), timeout: chosen.timeout}, nil
}

// check refuses now what would fail every call later: a token no header can carry (gRPC
// failed each call with INTERNAL) and a negative timeout (taken as none).
func (s *settings) check() error {
	if s.timeout < 0 {
		return fmt.Errorf("shellexec: timeout must not be negative, got %v", s.timeout)
	}
	if s.token == "" {
		return nil
	}
	if problem := tokenProblem(s.token); problem != "" {
		return fmt.Errorf("shellexec: token %s: a token is at most %d visible ASCII characters",
			problem, MaxBearerTokenChars)
	}
	return nil
}

// Close closes the connection; calls in flight fail.
func (c *Client) Close() error {
	return c.conn.Close()
}

// Stub is the generated stub on the client's connection, for what the wrapper does not cover.
func (c *Client) Stub() pb.ShellExecServiceClient {
	return c.stub
}

// bounded gives a unary call the client's timeout unless ctx already has a deadline.
func (c *Client) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}

// bearerToken adds the token to every call, unary and streaming, so no method can forget it.
func bearerToken(token string) []grpc.DialOption {
	withToken := func(ctx context.Context) context.Context {
		return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		return invoker(withToken(ctx), method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
		streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return streamer(withToken(ctx), desc, cc, method, opts...)
	}
	return []grpc.DialOption{grpc.WithChainUnaryInterceptor(unary), grpc.WithChainStreamInterceptor(stream)}
}
