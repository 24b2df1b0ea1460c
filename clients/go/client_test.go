package shellexec

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/backoff"
)

// gRPC's reconnect backoff grows to 120 s: after an outage a client kept failing UNAVAILABLE
// for up to ~17 s once the service was back. Dial bounds it at MaxReconnectDelay, keeping
// gRPC's other defaults (a zero MinConnectTimeout would cut each attempt to its backoff).
func TestTheReconnectBackoffIsBounded(t *testing.T) {
	params := connectParams()
	want := backoff.DefaultConfig
	want.MaxDelay = 5 * time.Second
	if MaxReconnectDelay != 5*time.Second || params.Backoff != want {
		t.Fatalf("reconnect backoff: %+v, want %+v", params.Backoff, want)
	}
	if params.MinConnectTimeout != 20*time.Second {
		t.Fatalf("minimum connect timeout: %v, want gRPC's default 20s", params.MinConnectTimeout)
	}
}

// A token's characters are counted as the service counts them, code points, not bytes (Dial's
// messages are checked by tests/clients/go/clienttest).
func TestTokenProblemCountsCharacters(t *testing.T) {
	for token, want := range map[string]string{
		"aéx":                    "holds a character outside ASCII (character 2 of 3)",
		"ab\xff":                 "ends with a character outside ASCII",
		strings.Repeat("x", 256): "",
		strings.Repeat("x", 257): "is 257 characters long; the service takes at most 256",
		strings.Repeat("é", 129): "holds a character outside ASCII (character 1 of 129)",
	} {
		if got := tokenProblem(token); got != want {
			t.Errorf("tokenProblem(%.20q) = %q, want %q", token, got, want)
		}
	}
}
