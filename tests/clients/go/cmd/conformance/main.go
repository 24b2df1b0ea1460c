// Command conformance plays the client conformance scenario (tests/clients/scenario.json,
// described in tests/clients/README.md) with the Go client against one address: the server
// itself or Envoy's front door. tests/clients/test_conformance_go.py runs it.
//
//	conformance -target 127.0.0.1:50051 -scenario tests/clients/scenario.json
//
// It prints one line per step and exits 1 at the first difference, naming it.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	shellexec "shellexec/clients/go"
	pb "shellexec/clients/go/gen/shellexec/v1"
)

func main() {
	target := flag.String("target", "", "host:port of the server or of Envoy")
	path := flag.String("scenario", "", "the scenario file")
	flag.Parse()
	if err := run(*target, *path); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("conformance: every step passed")
}

func run(target, path string) error {
	plan, err := readScenario(path)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	client, err := shellexec.Dial(target)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	player := &player{client: client, plan: plan}
	for _, step := range []struct {
		name string
		play func(context.Context) error
	}{
		{"publish a turn", player.publishTurn},
		{"list the pages", player.listPages},
		{"get the shell output", player.shellOutput},
		{"watch from 0, then resume", player.watch},
		{"errors", player.errors},
		{"list the sessions", player.sessionList},
	} {
		if err := step.play(ctx); err != nil {
			return fmt.Errorf("%s: %w", step.name, err)
		}
		fmt.Println("ok:", step.name)
	}
	return nil
}

type player struct {
	client    *shellexec.Client
	plan      *scenario
	runTaskID string
	session   *pb.Session
	messages  []*pb.Message
	created   []created
}

// created is a session the run created: its id, and the task id and agent it was created with.
type created struct {
	ID     string
	TaskID string
	Agent  string
}

func unique(prefix string) string {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return prefix + "-" + hex.EncodeToString(suffix)
}

// createSession creates one of the run's sessions, for the run's task id followed by suffix.
func (p *player) createSession(ctx context.Context, suffix, agent string) (*pb.Session, error) {
	taskID := p.runTaskID + suffix
	session, err := p.client.CreateSession(ctx, taskID, shellexec.SessionOptions{Agent: agent})
	if err != nil {
		return nil, err
	}
	p.created = append(p.created, created{session.GetId(), taskID, agent})
	return session, nil
}

func (p *player) publishTurn(ctx context.Context) error {
	p.runTaskID = unique(p.plan.Session.TaskIDPrefix + "-go")
	session, err := p.createSession(ctx, "", p.plan.Session.Agent)
	if err != nil {
		return err
	}
	p.session = session
	turn, err := p.client.StartTurn(ctx, session.GetId(), "")
	if err != nil {
		return err
	}
	for _, entry := range p.plan.Publishes {
		answer, err := p.client.PublishSequenced(ctx, session.GetId(), entry.Sequence, entry.Update)
		if err != nil {
			return fmt.Errorf("sequence %d: %w", entry.Sequence, err)
		}
		if answer.GetDuplicate() != entry.Duplicate {
			return fmt.Errorf("sequence %d: duplicate is %v, want %v", entry.Sequence, answer.GetDuplicate(), entry.Duplicate)
		}
	}
	if _, err := p.client.CompleteTurn(ctx, session.GetId(), turn.GetId(), p.plan.StopReason); err != nil {
		return err
	}
	final, err := p.client.GetSession(ctx, session.GetId())
	if err != nil {
		return err
	}
	if final.GetState() != p.plan.FinalSession.State || final.GetRevision() != p.plan.FinalSession.Revision {
		return fmt.Errorf("final session is %s at revision %d, want %+v", final.GetState(), final.GetRevision(), p.plan.FinalSession)
	}
	return nil
}

func (p *player) listPages(ctx context.Context) error {
	page := shellexec.Page{Limit: p.plan.PageSize}
	pages := 0
	for {
		answer, err := p.client.ListMessages(ctx, p.session.GetId(), page)
		if err != nil {
			return err
		}
		pages++
		p.messages = append(p.messages, answer.GetMessages()...)
		if !answer.GetHasMore() {
			break
		}
		page.After = answer.GetCursor()
	}
	if pages < 2 {
		return errors.New("page_size must be smaller than the number of messages")
	}
	described := make([]any, 0, len(p.messages))
	for _, message := range p.messages {
		described = append(described, describe(message))
	}
	return same("messages", described, p.plan.Messages)
}

// describe is a message in the scenario's terms (the keys tests/clients/README.md lists).
func describe(message *pb.Message) map[string]any {
	described := map[string]any{"author_type": message.GetAuthorType(), "type": message.GetType(),
		"content": message.GetContent()}
	if normalized := message.GetMetadata().GetNormalized(); normalized != nil {
		shell := normalized.GetShellExec()
		described["status"] = message.GetMetadata().GetStatus()
		described["command"] = shell.GetCommand()
		described["exit_code"] = shell.GetOutput().GetExitCode()
		described["result"] = shell.GetResult()
	}
	return described
}

func (p *player) shellOutput(ctx context.Context) error {
	index := int(p.plan.ShellOutput["message"].(float64))
	answer, err := p.client.ShellOutput(ctx, p.session.GetId(), p.messages[index].GetId())
	if err != nil {
		return err
	}
	got := map[string]any{"message": index, "status": answer.GetStatus(),
		"exit_code": answer.GetOutput().GetExitCode(), "stdout": answer.GetOutput().GetStdout(),
		"stderr": answer.GetOutput().GetStderr()}
	return same("shell output", got, p.plan.ShellOutput)
}

type event struct {
	Revision  int32
	Type      string
	MessageID string
}

func (p *player) watch(ctx context.Context) error {
	var expected []event
	for _, each := range p.plan.Watch.Events {
		id := "" // a turn's own events carry no message
		if each.Message != nil {
			id = p.messages[*each.Message].GetId()
		}
		expected = append(expected, event{each.Revision, each.Type, id})
	}
	seen, err := p.watched(ctx, 0, len(expected))
	if err != nil {
		return err
	}
	if !slices.Equal(seen, expected) {
		return fmt.Errorf("from 0: events %v, want %v", seen, expected)
	}
	resume := p.plan.Watch.ResumeFromRevision
	tail := slices.DeleteFunc(slices.Clone(expected), func(e event) bool { return e.Revision <= resume })
	seen, err = p.watched(ctx, resume, len(tail))
	if err != nil {
		return err
	}
	if !slices.Equal(seen, tail) {
		return fmt.Errorf("from %d: events %v, want %v", resume, seen, tail)
	}
	return nil
}

// watched reads count events after since, heartbeats left out, then ends the stream.
func (p *player) watched(ctx context.Context, since int32, count int) ([]event, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feed, err := p.client.WatchFrom(ctx, p.session.GetId(), since)
	if err != nil {
		return nil, err
	}
	var seen []event
	for len(seen) < count {
		received, err := feed.Recv()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("the stream ended after %v", seen)
		}
		if err != nil {
			return nil, err
		}
		if received.GetType() != "heartbeat" {
			seen = append(seen, event{received.GetRevision(), received.GetType(), received.GetMessage().GetId()})
		}
	}
	return seen, nil
}

func (p *player) errors(ctx context.Context) error {
	foreign := p.plan.Errors.ForeignMessage
	other, err := p.createSession(ctx, "-"+foreign.TaskSuffix, "")
	if err != nil {
		return err
	}
	_, err = p.client.ShellOutput(ctx, other.GetId(), p.messages[foreign.Message].GetId())
	if failed := asError(err); failed == nil || failed.Code != foreign.Code {
		return fmt.Errorf("foreign message: %v, want %s", err, foreign.Code)
	}
	bad := p.plan.Errors.BadField
	_, err = p.client.ListMessages(ctx, p.session.GetId(), shellexec.Page{Limit: bad.Limit})
	if err := bad.check("bad field", err); err != nil {
		return err
	}
	badList := p.plan.Errors.BadSessionListField
	_, err = p.client.ListSessions(ctx, shellexec.Page{Limit: badList.Limit})
	return badList.check("bad session list field", err)
}

// check is nil when err is the error the scenario says, naming its field.
func (bad badField) check(what string, err error) error {
	failed := asError(err)
	if failed == nil || failed.Code != bad.Code || failed.Field() != bad.Field {
		return fmt.Errorf("%s: %v, want %s naming %s", what, err, bad.Code, bad.Field)
	}
	return nil
}

func (p *player) sessionList(ctx context.Context) error {
	added := p.plan.SessionList.AddedSession
	if _, err := p.createSession(ctx, "-"+added.TaskSuffix, added.Agent); err != nil {
		return err
	}
	listed, err := p.newestPages(ctx, p.plan.SessionList.PageSize, p.created[0].ID)
	if err != nil {
		return err
	}
	var runs []created
	for _, session := range slices.Backward(listed) {
		taskID := session.GetTaskId()
		if taskID == p.runTaskID || strings.HasPrefix(taskID, p.runTaskID+"-") {
			runs = append(runs, created{session.GetId(), taskID, session.GetAgent()})
		}
	}
	if !slices.Equal(runs, p.created) {
		return fmt.Errorf("the run's sessions, oldest first: %v, want %v", runs, p.created)
	}
	return nil
}

// newestPages lists the sessions newest first, page by page up to the one holding oldestID
// (older sessions belong to other runs).
func (p *player) newestPages(ctx context.Context, pageSize int32, oldestID string) ([]*pb.Session, error) {
	page := shellexec.Page{Limit: pageSize, Sort: "desc"}
	var listed []*pb.Session
	for pages := 1; ; pages++ {
		answer, err := p.client.ListSessions(ctx, page)
		if err != nil {
			return nil, err
		}
		listed = append(listed, answer.GetSessions()...)
		holdsOldest := slices.ContainsFunc(answer.GetSessions(),
			func(session *pb.Session) bool { return session.GetId() == oldestID })
		if holdsOldest || !answer.GetHasMore() {
			if pages < 2 {
				return nil, errors.New("session_list.page_size must be smaller than the run's sessions")
			}
			return listed, nil
		}
		page.Before = answer.GetCursor()
	}
}

func asError(err error) *shellexec.Error {
	var failed *shellexec.Error
	if errors.As(err, &failed) {
		return failed
	}
	return nil
}

// same compares through JSON, as the scenario file holds its values.
func same(what string, got, want any) error {
	text, err := json.Marshal(got)
	if err != nil {
		return err
	}
	var decoded any
	if err := json.Unmarshal(text, &decoded); err != nil {
		return err
	}
	if !reflect.DeepEqual(decoded, want) {
		return fmt.Errorf("%s: got %s, want %v", what, text, want)
	}
	return nil
}
