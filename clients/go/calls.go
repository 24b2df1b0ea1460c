package shellexec

import (
	"context"

	pb "shellexec/clients/go/gen/shellexec/v1"
)

// NormalizeOptions are the optional fields of Normalize.
type NormalizeOptions struct {
	// Agent names the agent, e.g. "codex": a hint, never required for a correct result.
	Agent string
	// MaskSecrets masks credential forms in the answer as the service masks what browsers see.
	MaskSecrets bool
}

// SessionOptions are the optional fields of CreateSession.
type SessionOptions struct {
	// Agent is the agent's name, e.g. "claude".
	Agent string
	// RequestID makes a retry of the same call return the same session: pass the same value
	// on every retry of one call, a new one (a UUID) per call.
	RequestID string
}

// Page selects a page of ListMessages or ListSessions; the zero Page is the first 100, oldest
// first.
type Page struct {
	// Limit is the page size: 0 means 100, more than 500 is cut to 500.
	Limit int32
	// Before and After take a cursor, not both: a message id (ListMessages) or a session id
	// (ListSessions).
	Before string
	After  string
	// Sort is "asc" (the default) or "desc".
	Sort string
}

// Normalize folds the updates of ONE tool call, in order, into a normalized record; nothing
// is stored. Each update is a value encoding/json encodes to an ACP update object.
func (c *Client) Normalize(ctx context.Context, updates []any, options NormalizeOptions) (*pb.NormalizeShellExecResponse, error) {
	values, err := toValues(updates)
	if err != nil {
		return nil, err
	}
	request := &pb.NormalizeShellExecRequest{Updates: values, Agent: options.Agent, MaskSecrets: options.MaskSecrets}
	return unary(c, ctx, request, c.stub.NormalizeShellExec)
}

// Summarize computes the browser-facing summary of a full output.
func (c *Client) Summarize(ctx context.Context, output *pb.ShellOutput) (*pb.ShellOutputSummary, error) {
	response, err := unary(c, ctx, &pb.SummarizeShellOutputRequest{Output: output}, c.stub.SummarizeShellOutput)
	return response.GetSummary(), err
}

// CreateSession creates a session for taskID (the task is created on first use).
func (c *Client) CreateSession(ctx context.Context, taskID string, options SessionOptions) (*pb.Session, error) {
	request := &pb.CreateSessionRequest{TaskId: taskID, Agent: options.Agent, RequestId: options.RequestID}
	response, err := unary(c, ctx, request, c.stub.CreateSession)
	return response.GetSession(), err
}

// GetSession returns a session with its latest feed revision.
func (c *Client) GetSession(ctx context.Context, sessionID string) (*pb.Session, error) {
	response, err := unary(c, ctx, &pb.GetSessionRequest{SessionId: sessionID}, c.stub.GetSession)
	return response.GetSession(), err
}

// StartTurn starts a turn; a non-empty requestID makes a retry of the same call return the
// same turn. A second running turn is FAILED_PRECONDITION with reason TURN_ALREADY_RUNNING.
func (c *Client) StartTurn(ctx context.Context, sessionID, requestID string) (*pb.Turn, error) {
	request := &pb.StartTurnRequest{SessionId: sessionID, RequestId: requestID}
	response, err := unary(c, ctx, request, c.stub.StartTurn)
	return response.GetTurn(), err
}

// Publish records one ACP update (a value encoding/json encodes to the update object).
func (c *Client) Publish(ctx context.Context, sessionID string, update any) (*pb.PublishUpdateResponse, error) {
	return c.publish(ctx, &pb.PublishUpdateRequest{SessionId: sessionID}, update)
}

// PublishSequenced records one ACP update under a per-session sequence (at least 1): a
// sequence the session already stored changes nothing and answers Duplicate with the message
// as it is now, so a retry is harmless.
func (c *Client) PublishSequenced(ctx context.Context, sessionID string, sequence int64, update any) (*pb.PublishUpdateResponse, error) {
	return c.publish(ctx, &pb.PublishUpdateRequest{SessionId: sessionID, Sequence: &sequence}, update)
}

func (c *Client) publish(ctx context.Context, request *pb.PublishUpdateRequest, update any) (*pb.PublishUpdateResponse, error) {
	value, err := toValue(update, "update")
	if err != nil {
		return nil, err
	}
	request.Update = value
	return unary(c, ctx, request, c.stub.PublishUpdate)
}

// CompleteTurn completes a turn with the agent's ACP stop reason, e.g. "end_turn".
func (c *Client) CompleteTurn(ctx context.Context, sessionID, turnID, stopReason string) (*pb.CompleteTurnResponse, error) {
	request := &pb.CompleteTurnRequest{SessionId: sessionID, TurnId: turnID, StopReason: stopReason}
	return unary(c, ctx, request, c.stub.CompleteTurn)
}

// ListMessages returns one page of a session's messages, with output summaries only.
func (c *Client) ListMessages(ctx context.Context, sessionID string, page Page) (*pb.ListMessagesResponse, error) {
	request := &pb.ListMessagesRequest{SessionId: sessionID, Limit: page.Limit, Before: page.Before,
		After: page.After, Sort: page.Sort}
	return unary(c, ctx, request, c.stub.ListMessages)
}

// Messages returns every message of the session, oldest first, following the pages.
func (c *Client) Messages(ctx context.Context, sessionID string) ([]*pb.Message, error) {
	var found []*pb.Message
	page := Page{Limit: 500}
	for {
		response, err := c.ListMessages(ctx, sessionID, page)
		if err != nil {
			return nil, err
		}
		found = append(found, response.GetMessages()...)
		if !response.GetHasMore() {
			return found, nil
		}
		page.After = response.GetCursor()
	}
}

// ListSessions returns one page of the sessions the caller may see, by creation.
func (c *Client) ListSessions(ctx context.Context, page Page) (*pb.ListSessionsResponse, error) {
	request := &pb.ListSessionsRequest{Limit: page.Limit, Before: page.Before, After: page.After,
		Sort: page.Sort}
	return unary(c, ctx, request, c.stub.ListSessions)
}

// ShellOutput returns the full bounded output of a shell message.
func (c *Client) ShellOutput(ctx context.Context, sessionID, messageID string) (*pb.GetShellOutputResponse, error) {
	request := &pb.GetShellOutputRequest{SessionId: sessionID, MessageId: messageID}
	return unary(c, ctx, request, c.stub.GetShellOutput)
}

// BootState returns what a browser needs to open a task.
func (c *Client) BootState(ctx context.Context, taskID string) (*pb.BootState, error) {
	response, err := unary(c, ctx, &pb.GetBootStateRequest{TaskId: taskID}, c.stub.GetBootState)
	return response.GetInitialState(), err
}

// DeleteSession deletes a session with everything stored for it (needs the admin scope).
func (c *Client) DeleteSession(ctx context.Context, sessionID string) error {
	_, err := unary(c, ctx, &pb.DeleteSessionRequest{SessionId: sessionID}, c.stub.DeleteSession)
	return err
}

// DeleteTask deletes a task with all its sessions and returns their ids (needs admin).
func (c *Client) DeleteTask(ctx context.Context, taskID string) ([]string, error) {
	response, err := unary(c, ctx, &pb.DeleteTaskRequest{TaskId: taskID}, c.stub.DeleteTask)
	return response.GetDeletedSessionIds(), err
}
