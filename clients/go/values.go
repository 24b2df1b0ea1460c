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
func toValue(update any) (*structpb.Value, error) {
	if raw, ok := update.([]byte); ok {
		update = json.RawMessage(raw)
	}
	text, err := json.Marshal(update)
	if err != nil {
		return nil, fmt.Errorf("shellexec: update is not JSON: %w", err)
	}
	value := &structpb.Value{}
	if err := protojson.Unmarshal(text, value); err != nil {
		return nil, fmt.Errorf("shellexec: update is not JSON: %w", err)
	}
	return value, nil
}

func toValues(updates []any) ([]*structpb.Value, error) {
	values := make([]*structpb.Value, 0, len(updates))
	for index, update := range updates {
		value, err := toValue(update)
		if err != nil {
			return nil, fmt.Errorf("updates[%d]: %w", index, err)
		}
		values = append(values, value)
	}
	return values, nil
}
