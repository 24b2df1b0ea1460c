package main

import (
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
)

// eventStream is the JSON marshaler with Envoy's stream framing (the transcoder's
// stream_sse_style_delimited): each event of a server stream is a server-sent event
// `data: {event}` followed by a blank line, served as text/event-stream, where grpc-gateway
// would write newline-delimited `{"result": {event}}`. An error before the first event is the
// bare status, as Envoy answers it, not `{"error": {status}}`.
type eventStream struct {
	*runtime.JSONPb
}

func (m eventStream) Marshal(value any) ([]byte, error) {
	switch chunk := value.(type) {
	case map[string]any: // an event, as ForwardResponseStream wraps it
		if event, ok := chunk["result"]; ok && len(chunk) == 1 {
			text, err := m.JSONPb.Marshal(event)
			return append([]byte("data: "), text...), err
		}
	case map[string]proto.Message: // a stream's error
		if failure, ok := chunk["error"]; ok && len(chunk) == 1 {
			return m.JSONPb.Marshal(failure)
		}
	}
	return m.JSONPb.Marshal(value)
}

// Delimiter ends each event with the blank line of a server-sent event.
func (eventStream) Delimiter() []byte {
	return []byte("\n\n")
}

// StreamContentType is the content type of a stream that delivers events.
func (eventStream) StreamContentType(any) string {
	return "text/event-stream"
}
