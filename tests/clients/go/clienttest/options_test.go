package clienttest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	shellexec "shellexec/clients/go"
)

const secret = "shx_Secret0123456789"

// A token no header can carry failed every call with INTERNAL (a line feed read with it from a
// file): Dial refuses it, saying what is wrong in the service's words, never what it is.
func TestDialRefusesATokenNoHeaderCanCarry(t *testing.T) {
	n := len(secret)
	for _, refused := range []struct{ token, problem string }{
		{secret + "\n", "ends with a line feed"},
		{secret + "\r\n", "holds a carriage return (character 21 of 22)"},
		{"Bearer " + secret, "holds a space (character 7 of 27)"},
		{secret + "\t", "ends with a tab"},
		{secret + "\x00x", "holds a NUL byte (character 21 of 22)"},
		{secret + "\x7f", "ends with a control character"},
		{secret + "é" + secret, "holds a character outside ASCII (character 21 of 41)"},
		{secret + "😀", "ends with a character outside ASCII"},
		{secret + strings.Repeat("x", 257-n), "is 257 characters long; the service takes at most 256"},
	} {
		client, err := shellexec.Dial("127.0.0.1:9", shellexec.WithToken(refused.token))
		want := "shellexec: token " + refused.problem + ": a token is at most 256 visible ASCII characters"
		if client != nil || err == nil || err.Error() != want {
			t.Fatalf("%q: got %v, %v; want the error %q", refused.token, client, err, want)
		}
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the error shows the token: %v", err)
		}
	}
	for _, taken := range []string{"", "!~", strings.Repeat("x", 256)} {
		client, err := shellexec.Dial("127.0.0.1:9", shellexec.WithToken(taken))
		if err != nil {
			t.Fatalf("a token of %d characters: %v", len(taken), err)
		}
		_ = client.Close()
	}
}

// A negative timeout was taken as none; 0 is none, as in the other clients.
func TestDialRefusesANegativeTimeout(t *testing.T) {
	client, err := shellexec.Dial("127.0.0.1:9", shellexec.WithTimeout(-time.Second))
	if want := "shellexec: timeout must not be negative, got -1s"; client != nil || err == nil || err.Error() != want {
		t.Fatalf("got %v, %v; want the error %q", client, err, want)
	}
	unbounded, err := shellexec.Dial(targets(t)[0], shellexec.WithTimeout(0),
		shellexec.WithToken(os.Getenv("SHELLEXEC_TEST_TOKEN")))
	if err != nil {
		t.Fatal(err)
	}
	defer unbounded.Close()
	if _, err := unbounded.CreateSession(context.Background(), "go-client-no-deadline", shellexec.SessionOptions{}); err != nil {
		t.Fatalf("without a deadline: %v", err)
	}
}
