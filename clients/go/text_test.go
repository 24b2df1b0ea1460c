package shellexec

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	pb "shellexec/clients/go/gen/shellexec/v1"
)

// Text that is not UTF-8 was changed on the way, and stored so: encoding/json wrote invalid
// bytes as U+FFFD, with no error. A JSON text's lone surrogate escape failed with protojson's
// "unexpected EOF", and a string field with gRPC's Internal "string field contains invalid
// UTF-8", naming no field. Each is now refused before anything is sent (the target is never
// reached), naming where the text is and what is wrong with it.
func TestTextThatIsNotUTF8IsRefusedBeforeSending(t *testing.T) {
	client, err := Dial("127.0.0.1:9") // never reached: each call is refused before it is sent
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	chat := func(text any) map[string]any {
		return map[string]any{"sessionUpdate": "agent_message_chunk",
			"content": map[string]any{"type": "text", "text": text}}
	}
	type tagged struct {
		Kind    string            `json:"sessionUpdate"`
		Content map[string]string `json:"content"`
	}
	stdout := "ok \xed\xa0\x80 x"
	refused := []struct {
		name string
		call func() error
		want string
	}{
		{"invalid bytes in a map", func() error {
			_, err := client.Publish(ctx, "ses_1", chat("bad \xff\xfe end"))
			return err
		}, "shellexec: update.content.text holds invalid UTF-8 (byte 5 of 10 is 0xff)"},
		{"an encoded surrogate in a list", func() error {
			_, err := client.PublishSequenced(ctx, "ses_1", 1, chat([]any{"ok", "lone \xed\xa0\x80"}))
			return err
		}, "shellexec: update.content.text[1] holds an encoded surrogate (byte 6 of 8), which UTF-8 cannot carry"},
		{"a key", func() error {
			_, err := client.Publish(ctx, "ses_1", map[string]any{"content": map[string]any{"k\xff": 1}})
			return err
		}, "shellexec: a key in update.content holds invalid UTF-8"},
		{"a struct field", func() error {
			_, err := client.Publish(ctx, "ses_1", tagged{"plan", map[string]string{"odd key": "\xc3"}})
			return err
		}, `shellexec: update.content["odd key"] holds invalid UTF-8 (byte 1 of 1 is 0xc3)`},
		{"a lone surrogate escape in a json.RawMessage", func() error {
			_, err := client.Publish(ctx, "ses_1", json.RawMessage(
				`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"lone \ud800 x"}}`))
			return err
		}, `shellexec: update.content.text holds a lone surrogate (the escape \ud800), which UTF-8 cannot carry`},
		{"a trailing surrogate escape in JSON bytes", func() error {
			_, err := client.Publish(ctx, "ses_1", []byte(`{"a":["\udc00\ud800"]}`))
			return err
		}, `shellexec: update.a[0] holds a lone surrogate (the escape \udc00)`},
		{"invalid bytes in JSON bytes", func() error {
			_, err := client.Publish(ctx, "ses_1", []byte("{\"content\":{\"text\":\"raw \xff y\"}}"))
			return err
		}, "shellexec: update.content.text holds invalid UTF-8 (a byte 0xff)"},
		{"the second update of a normalize", func() error {
			_, err := client.Normalize(ctx, []any{chat("fine"), chat("bad \xff")}, NormalizeOptions{})
			return err
		}, "shellexec: updates[1].content.text holds invalid UTF-8"},
		{"a task id", func() error {
			_, err := client.CreateSession(ctx, "bad\xfftask", SessionOptions{})
			return err
		}, "shellexec: task_id holds invalid UTF-8 (byte 4 of 8 is 0xff)"},
		{"an output to summarize", func() error {
			_, err := client.Summarize(ctx, &pb.ShellOutput{Stdout: &stdout})
			return err
		}, "shellexec: output.stdout holds an encoded surrogate (byte 4 of 8)"},
		{"a watched session id", func() error {
			_, err := client.WatchFrom(ctx, "ses_\xff", 0)
			return err
		}, "shellexec: session_id holds invalid UTF-8"},
	}
	for _, test := range refused {
		err := test.call()
		if err == nil || !strings.HasPrefix(err.Error(), test.want) ||
			!strings.HasSuffix(err.Error(), "the service takes UTF-8 text only") {
			t.Errorf("%s: %v, want %q...", test.name, err, test.want)
		}
		var sent *Error
		if errors.As(err, &sent) {
			t.Errorf("%s: sent, and failed %v", test.name, sent.Code)
		}
	}

	// UTF-8 text, paired surrogate escapes and U+FFFD itself (written or escaped) are taken.
	for _, update := range []any{
		chat("héllo \U0001F600 \uFFFD"),
		json.RawMessage(`{"text":"\ud83d\ude00 \ufffd \u00e9 \"q\" \\ <&>"}`),
		[]byte(`{"k\u00e9":["\n", 1, true, null, {}]}`),
	} {
		if _, err := toValue(update, "update"); err != nil {
			t.Errorf("toValue(%v): %v", update, err)
		}
	}
	value, err := toValue(json.RawMessage(`{"t":"\ud83d\ude00"}`), "update")
	if err != nil || value.GetStructValue().GetFields()["t"].GetStringValue() != "\U0001F600" {
		t.Errorf("a paired escape: %v, %v", value, err)
	}
}
