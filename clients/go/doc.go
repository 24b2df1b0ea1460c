// Package shellexec is a small client for shellexec.v1.ShellExecService over gRPC.
//
//	client, err := shellexec.Dial("127.0.0.1:50051", shellexec.WithToken(token))
//	session, err := client.CreateSession(ctx, "task-1", shellexec.SessionOptions{Agent: "codex"})
//	turn, err := client.StartTurn(ctx, session.GetId(), "")
//	_, err = client.PublishSequenced(ctx, session.GetId(), 1, map[string]any{"sessionUpdate": "tool_call", ...})
//	_, err = client.CompleteTurn(ctx, session.GetId(), turn.GetId(), "end_turn")
//
// Every method takes a context: its deadline and cancellation bound the call (a unary call
// without a deadline gets the client's default timeout, 30 seconds unless WithTimeout says
// otherwise). ACP updates are plain Go values that encoding/json encodes to a JSON object
// (map[string]any, a struct, json.RawMessage), never google.protobuf.Value builders. The
// generated messages (package shellexec/clients/go/gen/shellexec/v1) are returned as they are.
// Dial refuses a token no header can carry and a negative timeout; after an outage the client
// tries to reconnect at least every MaxReconnectDelay (5 seconds).
//
// A failed call returns an *Error: its gRPC code, message and the google.rpc details the
// service sends (the ErrorInfo reason such as TURN_ALREADY_RUNNING, the BadRequest field,
// the ResourceInfo of what was not found). It carries the gRPC status, so status.Code(err)
// and status.FromError(err) work on it too.
package shellexec
