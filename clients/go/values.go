package shellexec

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// toValue encodes a plain Go value as google.protobuf.Value through its JSON form, so maps,
// structs with json tags and json.RawMessage all work. A []byte is JSON text, as a
// json.RawMessage is: encoding/json would send it as a base64 string, which is never an update.
// Text that is not UTF-8 (invalid bytes, a lone surrogate escape such as "\ud800") is refused
// with an error naming where it is (update.content.text), not sent changed (text.go).
func toValue(update any, path string) (*structpb.Value, error) {
	if raw, ok := update.([]byte); ok {
		update = json.RawMessage(raw)
	}
	text, err := json.Marshal(update)
	if err != nil {
		return nil, fmt.Errorf("shellexec: %s is not JSON: %w", path, err)
	}
	if err := updateText(update, text, path); err != nil {
		return nil, err
	}
	value := &structpb.Value{}
	if err := protojson.Unmarshal(text, value); err != nil {
		return nil, fmt.Errorf("shellexec: %s is not JSON: %w", path, err)
	}
	return value, nil
}

func toValues(updates []any) ([]*structpb.Value, error) {
	values := make([]*structpb.Value, 0, len(updates))
	for index, update := range updates {
		value, err := toValue(update, fmt.Sprintf("updates[%d]", index))
		if err != nil {
			return nil, err
		}
		values = append(values, value)
	}
	return values, nil
}
