package shellexec

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

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

// A cyclic value (a tree whose children point back to their parent, a map holding itself
// under two keys) fails at once with encoding/json's "encountered a cycle". The check's own
// walk stopped at a depth of 1000 and went on with the other branches: 2^1000 visits, and
// Publish hung.
func TestACyclicUpdateFailsAtOnce(t *testing.T) {
	type node struct {
		Name     string  `json:"name"`
		Parent   *node   `json:"parent,omitempty"`
		Children []*node `json:"children,omitempty"`
	}
	root := &node{Name: "root"}
	root.Children = []*node{{Name: "a", Parent: root}, {Name: "b", Parent: root}}
	loop := map[string]any{}
	loop["a"], loop["b"] = loop, loop
	for name, update := range map[string]any{"a tree": root, "a map": loop} {
		done := make(chan error, 1)
		go func() { _, err := toValue(update, "update"); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "encountered a cycle") ||
				!strings.HasPrefix(err.Error(), "shellexec: update is not JSON: ") {
				t.Errorf("%s: %v, want encoding/json's cycle", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no answer after 10 s", name)
		}
	}
}

// A large update is checked in place, in one pass over its JSON text: about as fast as
// json.Marshal and protojson alone, where building each string as runes took 4 times as long
// and 3.7 times the memory (BenchmarkLargeUpdate).
func TestALargeUpdateIsCheckedWithoutCopyingIt(t *testing.T) {
	text := strings.Repeat("0123456789abcdef", 1<<18) // 4 MiB
	update := map[string]any{"sessionUpdate": "agent_message_chunk",
		"content": map[string]any{"type": "text", "text": text}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	value, err := toValue(update, "update")
	runtime.ReadMemStats(&after)
	if err != nil || value.GetStructValue().GetFields()["content"].GetStructValue().
		GetFields()["text"].GetStringValue() != text {
		t.Fatalf("toValue: %v", err)
	}
	// json.Marshal's buffer as it grows, its copy, and protojson's string: about 3 times the
	// text (a rune and a copy of each string made it 30).
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 8*uint64(len(text)) {
		t.Errorf("toValue allocated %d bytes for a text of %d", allocated, len(text))
	}
}

func BenchmarkLargeUpdate(b *testing.B) {
	text := strings.Repeat("0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ é\n", 1<<16)[:4<<20]
	update := map[string]any{"sessionUpdate": "agent_message_chunk",
		"content": map[string]any{"type": "text", "text": text}}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := toValue(update, "update"); err != nil {
			b.Fatal(err)
		}
	}
}

type textLabel string

type textWithLabel struct {
	textLabel        // unexported, embedded, no struct: encoding/json leaves it out
	Text      string `json:"text"`
}

type textMasked struct{ Raw string }

func (m *textMasked) MarshalText() ([]byte, error) { return []byte("***"), nil }

type textMaskedEnvelope struct {
	Secret textMasked `json:"secret"`
	Note   any        `json:"note"`
}

type textInner struct {
	Text   string `json:"text"`
	Hidden string // hidden by the outer Hidden
}

type textOuter struct {
	textInner
	Hidden  string
	Skipped string          `json:"-"`
	Zero    textAlwaysZero  `json:"zero,omitzero"`
	Quoted  string          `json:"quoted,string"`
	Raw     json.RawMessage `json:"raw"`
}

type textAlwaysZero struct{ Text string }

type textPointerJSON struct{ Raw string }

func (*textPointerJSON) MarshalJSON() ([]byte, error) { return []byte(`"\ufffd"`), nil }

type textDupA struct{ Dup string }
type textDupB struct{ Dup string }

type textDuplicates struct { // two Dup fields as deep as each other: encoding/json writes neither
	textDupA
	textDupB
	Raw json.RawMessage
}

func (textAlwaysZero) IsZero() bool { return true }

type textBadValue struct{}

func (textBadValue) MarshalText() ([]byte, error) { return []byte("v\xff"), nil }

type textBadKey int

func (k textBadKey) MarshalText() ([]byte, error) { return []byte("k\xff"), nil }

// What encoding/json sends, and only that, is checked, as it sends it: fields it leaves out
// (unexported, embedded unexported non-structs, hidden, "-", omitzero by an IsZero method)
// were refused; a value written by a MarshalText on its pointer had its fields refused; and
// a map key written by MarshalText was not checked at all.
func TestTheTextCheckedIsTheTextEncodingJSONSends(t *testing.T) {
	escaped := json.RawMessage(`"\ufffd"`) // a U+FFFD in the JSON text, so the Go value is walked
	taken := map[string]any{
		"an unexported embedded string":  textWithLabel{textLabel: "\xff", Text: "hello"},
		"one beside a U+FFFD":            []any{textWithLabel{textLabel: "\xff"}, escaped},
		"a MarshalText on the pointer":   &textMaskedEnvelope{Secret: textMasked{Raw: "\xff"}},
		"one beside a U+FFFD (2)":        &textMaskedEnvelope{Secret: textMasked{Raw: "\xff"}, Note: escaped},
		"one in a slice beside a U+FFFD": []textMaskedEnvelope{{Secret: textMasked{Raw: "\xff"}, Note: "\uFFFD"}},
		"fields encoding/json leaves out": textOuter{textInner: textInner{Text: "ok", Hidden: "\xff"},
			Skipped: "\xff", Zero: textAlwaysZero{"\xff"}, Raw: escaped},
		"a MarshalJSON on the pointer":      &struct{ X textPointerJSON }{textPointerJSON{Raw: "\xff"}},
		"fields of one name, both left out": textDuplicates{textDupA{"\xff"}, textDupB{"\xfe"}, escaped},
	}
	for name, update := range taken {
		if _, err := toValue(update, "update"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	refused := []struct {
		name   string
		update any
		want   string
	}{
		{"a promoted field", textOuter{textInner: textInner{Text: "a\xff"}}, "update.text holds invalid UTF-8 (byte 2 of 2 is 0xff)"},
		{"a quoted field", textOuter{Quoted: "\xfe", Raw: escaped}, "update.quoted holds invalid UTF-8 (byte 1 of 1 is 0xfe)"},
		{"a MarshalText on the value", map[string]any{"a": []any{1, textBadValue{}}}, "update.a[1] holds invalid UTF-8 (byte 2 of 2 is 0xff)"},
		{"a map key written by MarshalText", map[string]any{"sessionUpdate": "plan", "meta": map[textBadKey]string{7: "x"}},
			"a key in update.meta holds invalid UTF-8 (byte 2 of 2 is 0xff)"},
		{"a MarshalText on the pointer of a map value", map[string]textMasked{"x": {Raw: "\xff"}}, "update.x.Raw holds invalid UTF-8"},
		{"a MarshalJSON on the pointer of a map value", map[string]textPointerJSON{"x": {Raw: "\xff"}}, "update.x.Raw holds invalid UTF-8"},
		{"the first in the order sent", map[string]any{"b": "\xfe", "a": []string{"ok", "\xff"}}, "update.a[1] holds invalid UTF-8"},
	}
	for _, test := range refused {
		_, err := toValue(test.update, "update")
		if err == nil || !strings.HasPrefix(err.Error(), "shellexec: "+test.want) {
			t.Errorf("%s: %v, want %q", test.name, err, test.want)
		}
	}
}
