package main

import (
	"encoding/json"
	"os"

	"google.golang.org/grpc/codes"
)

// scenario is tests/clients/scenario.json; tests/clients/README.md describes each key.
type scenario struct {
	Session struct {
		TaskIDPrefix string `json:"task_id_prefix"`
		Agent        string `json:"agent"`
	} `json:"session"`
	Publishes []struct {
		Sequence  int64           `json:"sequence"`
		Update    json.RawMessage `json:"update"`
		Duplicate bool            `json:"duplicate"`
	} `json:"publishes"`
	StopReason   string `json:"stop_reason"`
	FinalSession struct {
		State    string `json:"state"`
		Revision int32  `json:"revision"`
	} `json:"final_session"`
	PageSize    int32          `json:"page_size"`
	Messages    []any          `json:"messages"`
	ShellOutput map[string]any `json:"shell_output"`
	Watch       struct {
		Events []struct {
			Revision int32  `json:"revision"`
			Type     string `json:"type"`
			Message  *int   `json:"message"` // nil for a turn's own events
		} `json:"events"`
		ResumeFromRevision int32 `json:"resume_from_revision"`
	} `json:"watch"`
	Errors struct {
		ForeignMessage struct {
			TaskSuffix string     `json:"task_suffix"`
			Message    int        `json:"message"`
			Code       codes.Code `json:"code"`
		} `json:"foreign_message"`
		BadField            badField `json:"bad_field"`
		BadSessionListField badField `json:"bad_session_list_field"`
	} `json:"errors"`
	SessionList struct {
		PageSize     int32 `json:"page_size"`
		AddedSession struct {
			TaskSuffix string `json:"task_suffix"`
			Agent      string `json:"agent"`
		} `json:"added_session"`
	} `json:"session_list"`
}

// badField is a call with a bad limit and the error it must answer.
type badField struct {
	Limit int32      `json:"limit"`
	Code  codes.Code `json:"code"`
	Field string     `json:"field"`
}

func readScenario(path string) (*scenario, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var read scenario
	return &read, json.Unmarshal(text, &read)
}
