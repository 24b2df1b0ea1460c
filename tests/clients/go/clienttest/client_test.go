// Package clienttest tests the Go client (clients/go) against a real server with
// authentication on, at every address of SHELLEXEC_TEST_TARGETS (the server itself and Envoy's
// front door, comma-separated), with the admin token SHELLEXEC_TEST_TOKEN.
// tests/clients/test_client_go.py starts the stack and runs these tests.
package clienttest

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	shellexec "shellexec/clients/go"
	pb "shellexec/clients/go/gen/shellexec/v1"
)

func targets(t *testing.T) []string {
	t.Helper()
	listed := os.Getenv("SHELLEXEC_TEST_TARGETS")
	if listed == "" || os.Getenv("SHELLEXEC_TEST_TOKEN") == "" {
		t.Fatal("SHELLEXEC_TEST_TARGETS and SHELLEXEC_TEST_TOKEN name the stack to test against")
	}
	return strings.Split(listed, ",")
}

func dial(t *testing.T, target string, options ...shellexec.Option) *shellexec.Client {
	t.Helper()
	client, err := shellexec.Dial(target, append(options, shellexec.WithTimeout(10*time.Second))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func admin(t *testing.T, target string) *shellexec.Client {
	return dial(t, target, shellexec.WithToken(os.Getenv("SHELLEXEC_TEST_TOKEN")))
}

func failure(t *testing.T, err error) *shellexec.Error {
	t.Helper()
	var failed *shellexec.Error
	if !errors.As(err, &failed) {
		t.Fatalf("want a *shellexec.Error, got %v", err)
	}
	return failed
}

func toolCall(id, command string) map[string]any {
	return map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": command,
		"kind": "execute", "status": "in_progress",
		"rawInput": map[string]any{"command": []string{"/bin/bash", "-lc", command}, "cwd": "/src"}}
}

func TestTheTokenGoesWithEveryCall(t *testing.T) {
	ctx := context.Background()
	for _, target := range targets(t) {
		client := admin(t, target)
		session, err := client.CreateSession(ctx, "go-client-token", shellexec.SessionOptions{Agent: "codex"})
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		if _, err := client.Publish(ctx, session.GetId(), toolCall("c1", "ls")); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		watching, cancel := context.WithTimeout(ctx, 10*time.Second)
		feed, err := client.WatchFrom(watching, session.GetId(), 0)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		for event, err := feed.Recv(); event.GetType() != "session.message.added"; event, err = feed.Recv() {
			if err != nil {
				t.Fatalf("%s: the stream failed before the message: %v", target, err)
			}
		}
		cancel()

		_, err = dial(t, target).GetSession(ctx, session.GetId())
		if failed := failure(t, err); failed.Code != codes.Unauthenticated || status.Code(err) != codes.Unauthenticated {
			t.Fatalf("%s: without the token: %v", target, err)
		}
	}
}

func TestAnErrorKeepsItsStatusAndDetails(t *testing.T) {
	ctx := context.Background()
	for _, target := range targets(t) {
		client := admin(t, target)
		session, err := client.CreateSession(ctx, "go-client-errors", shellexec.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.StartTurn(ctx, session.GetId(), ""); err != nil {
			t.Fatal(err)
		}
		_, err = client.StartTurn(ctx, session.GetId(), "")
		failed := failure(t, err)
		if failed.Code != codes.FailedPrecondition || failed.Reason != "TURN_ALREADY_RUNNING" ||
			failed.Domain != "shellexec" || shellexec.Reason(err) != "TURN_ALREADY_RUNNING" {
			t.Fatalf("%s: second turn: %#v", target, failed)
		}
		// The status itself travels with the error, details included.
		rpcStatus, ok := status.FromError(err)
		if !ok || len(rpcStatus.Details()) == 0 {
			t.Fatalf("%s: no status details in %v", target, err)
		}
		if _, isInfo := rpcStatus.Details()[0].(*errdetails.ErrorInfo); !isInfo {
			t.Fatalf("%s: first detail is %T", target, rpcStatus.Details()[0])
		}

		_, err = client.GetSession(ctx, "ses_"+strings.Repeat("0", 32))
		if failed := failure(t, err); failed.Code != codes.NotFound || failed.ResourceType != "shellexec.v1.Session" {
			t.Fatalf("%s: unknown session: %#v", target, failed)
		}
		_, err = client.PublishSequenced(ctx, session.GetId(), 0, toolCall("c1", "ls"))
		if failed := failure(t, err); failed.Code != codes.InvalidArgument || failed.Field() != "sequence" {
			t.Fatalf("%s: sequence 0: %#v", target, failed)
		}
	}
}

func TestUpdatesArePlainGoValues(t *testing.T) {
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type chunk struct {
		SessionUpdate string  `json:"sessionUpdate"`
		Content       content `json:"content"`
	}
	ctx := context.Background()
	client := admin(t, targets(t)[0])
	session, err := client.CreateSession(ctx, "go-client-values", shellexec.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := client.Publish(ctx, session.GetId(), chunk{"agent_message_chunk", content{"text", "Hello."}})
	if err != nil || answer.GetMessage().GetContent() != "Hello." {
		t.Fatalf("a struct update: %v, %v", answer, err)
	}
	if _, err := client.Publish(ctx, session.GetId(), make(chan int)); err == nil {
		t.Fatal("a value JSON cannot encode was sent")
	}
	// JSON text as it was read, from a file or an agent's stdout.
	text := []byte(`{"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": " Bye."}}`)
	answer, err = client.Publish(ctx, session.GetId(), text)
	if err != nil || answer.GetMessage().GetContent() != "Hello. Bye." {
		t.Fatalf("a []byte update: %v, %v", answer, err)
	}
	if _, err := client.Publish(ctx, session.GetId(), []byte("not json")); err == nil {
		t.Fatal("[]byte that is not JSON was sent")
	}
	normalized, err := client.Normalize(ctx, []any{toolCall("c2", "pwd")}, shellexec.NormalizeOptions{Agent: "codex"})
	if err != nil || normalized.GetShellExec().GetCommand() != "pwd" {
		t.Fatalf("normalize: %v, %v", normalized, err)
	}
	stdout := "a\nb\n"
	summary, err := client.Summarize(ctx, &pb.ShellOutput{Stdout: &stdout})
	if err != nil || summary.GetStdoutBytes() != 4 || !summary.GetHasOutput() {
		t.Fatalf("summarize: %v, %v", summary, err)
	}
}

func TestTheContextBoundsEveryCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	client := admin(t, targets(t)[0])
	_, err := client.CreateSession(ctx, "go-client-cancelled", shellexec.SessionOptions{})
	if failure(t, err).Code != codes.Canceled {
		t.Fatalf("a cancelled call: %v", err)
	}
	feed, err := client.Watch(ctx, "ses_"+strings.Repeat("0", 32))
	if err == nil {
		_, err = feed.Recv()
	}
	if errors.Is(err, io.EOF) || failure(t, err).Code != codes.Canceled {
		t.Fatalf("a cancelled watch: %v", err)
	}
}

// A caller may hold 64 feeds at once; a closed feed is let go of at once. Feeds read and left
// without Close stayed open until their lifetime ended (five minutes), and the 65th was
// refused with TOO_MANY_WATCHERS.
func TestAClosedFeedIsLetGoOf(t *testing.T) {
	ctx := context.Background()
	client := admin(t, targets(t)[0])
	session, err := client.CreateSession(ctx, "go-client-close", shellexec.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for opened := 0; opened < 64; opened++ {
		feed, err := client.Watch(ctx, session.GetId())
		if err != nil {
			t.Fatal(err)
		}
		if event, err := feed.Recv(); err != nil || event.GetType() != "heartbeat" {
			t.Fatalf("feed %d: %v, %v", opened, event, err)
		}
		feed.Close()
		feed.Close() // a second Close does nothing
		if _, err := feed.Recv(); err == nil {
			t.Fatalf("feed %d: Recv after Close", opened)
		}
	}
	// The server hears of the last closes a moment later: asked again until then.
	deadline := time.Now().Add(10 * time.Second)
	for {
		feed, err := client.Watch(ctx, session.GetId())
		if err == nil {
			_, err = feed.Recv()
			feed.Close()
		}
		if err == nil {
			return
		}
		if shellexec.Reason(err) != "TOO_MANY_WATCHERS" || time.Now().After(deadline) {
			t.Fatalf("a feed after 64 closed ones: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestMessagesFollowsThePagesAndDeleteTaskAnswersTheSessions(t *testing.T) {
	ctx := context.Background()
	client := admin(t, targets(t)[0])
	task := "go-client-pages-" + time.Now().Format("150405.000000")
	session, err := client.CreateSession(ctx, task, shellexec.SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, command := range []string{"ls", "pwd", "date"} {
		if _, err := client.Publish(ctx, session.GetId(), toolCall("call-"+command, command)); err != nil {
			t.Fatal(err)
		}
	}
	page, err := client.ListMessages(ctx, session.GetId(), shellexec.Page{Limit: 2})
	if err != nil || len(page.GetMessages()) != 2 || !page.GetHasMore() {
		t.Fatalf("first page: %v, %v", page, err)
	}
	all, err := client.Messages(ctx, session.GetId())
	if err != nil || len(all) != 3 || all[2].GetContent() != "date" {
		t.Fatalf("every message: %v, %v", all, err)
	}
	state, err := client.BootState(ctx, task)
	if err != nil || state.GetSession().GetId() != session.GetId() {
		t.Fatalf("boot state: %v, %v", state, err)
	}
	deleted, err := client.DeleteTask(ctx, task)
	if err != nil || len(deleted) != 1 || deleted[0] != session.GetId() {
		t.Fatalf("delete task: %v, %v", deleted, err)
	}
	if err := client.DeleteSession(ctx, session.GetId()); failure(t, err).Code != codes.NotFound {
		t.Fatalf("delete a deleted session: %v", err)
	}
}
