package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// The codes' strings are the event contract's (docs/events.md): a change
// here is a breaking change.
func TestErrorCodesContract(t *testing.T) {
	tests := []struct {
		code ErrorCode
		llm  llm.Code // the provider code it derives from, if any
		want string
	}{
		{CodeProviderUnreachable, llm.CodeUnreachable, "provider_unreachable"},
		{CodeProviderAuth, llm.CodeAuth, "provider_auth"},
		{CodeProviderModelNotFound, llm.CodeModelNotFound, "provider_model_not_found"},
		{CodeProviderContextLength, llm.CodeContextLength, "provider_context_length"},
		{CodeProviderRateLimited, llm.CodeRateLimited, "provider_rate_limited"},
		{CodeProviderServer, llm.CodeServer, "provider_server"},
		{CodeProviderBadResponse, llm.CodeBadResponse, "provider_bad_response"},
		{CodeProviderInvalidRequest, llm.CodeInvalidRequest, "provider_invalid_request"},
		{CodeProviderCancelled, llm.CodeCancelled, "provider_cancelled"},
		{CodeToolLoop, "", "tool_loop"},
		{CodeTimeout, "", "timeout"},
		{CodeUsage, "", "usage"},
		{CodeSessionBusy, "", "session_busy"},
		{CodeAgentError, "", "agent_error"},
	}
	doc, err := os.ReadFile("../docs/events.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		if string(tc.code) != tc.want {
			t.Errorf("%s: want %s", tc.code, tc.want)
		}
		if tc.llm != "" && ProviderCode(tc.llm) != tc.code {
			t.Errorf("ProviderCode(%s) = %s, want %s", tc.llm, ProviderCode(tc.llm), tc.code)
		}
		// The document lists provider codes by their llm part.
		listed := strings.TrimPrefix(tc.want, "provider_")
		if !strings.Contains(string(doc), "`"+listed+"`") {
			t.Errorf("docs/events.md does not list %s", tc.want)
		}
		b, _ := json.Marshal(Event{Type: EventError, Code: tc.code, Error: "e"})
		if want := fmt.Sprintf(`{"type":"error","code":%q,"message":"e","retryable":false}`, tc.want); string(b) != want {
			t.Errorf("got %s, want %s", b, want)
		}
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want ErrorCode
	}{
		{"a provider's error", &llm.Error{Code: llm.CodeUnreachable, Message: "down"}, CodeProviderUnreachable},
		{"a wrapped provider's error", fmt.Errorf("chat: %w", &llm.Error{Code: llm.CodeContextLength}), CodeProviderContextLength},
		{"a loop the agent stopped", &turnError{code: CodeToolLoop, msg: "stopped"}, CodeToolLoop},
		{"a wrapped stop", fmt.Errorf("turn: %w", &turnError{code: CodeToolLoop}), CodeToolLoop},
		{"anything else", errors.New("boom"), CodeAgentError},
	}
	for _, tc := range tests {
		if got := CodeOf(tc.err); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// The checkpoint and restore events in the contract's shape
// (docs/events.md).
func TestCheckpointAndRestoreJSON(t *testing.T) {
	for _, tc := range []struct {
		ev   Event
		want string
	}{
		{Event{Type: EventCheckpoint, ID: "call_2", Name: "run_shell_command", Checkpoint: &CheckpointInfo{ID: 12, Seq: 5, Files: 230, Stored: 1843}},
			`{"type":"checkpoint","id":"call_2","name":"run_shell_command","checkpoint":12,"seq":5,"files":230,"stored":1843}`},
		{Event{Type: EventCheckpoint, ID: "c", Name: "edit", Checkpoint: &CheckpointInfo{ID: 1, TooLarge: []string{"big.bin"}}},
			`{"type":"checkpoint","id":"c","name":"edit","checkpoint":1,"seq":0,"files":0,"stored":0,"too_large":["big.bin"]}`},
		{Event{Type: EventRestore, Restore: &RestoreInfo{Op: "undo", Checkpoint: 14, Turn: 3, Files: []FileChange{{"a.txt", "modify"}}, Kept: []string{"notes.md"}}},
			`{"type":"restore","op":"undo","checkpoint":14,"turn":3,"files":[{"path":"a.txt","action":"modify"}],"kept":["notes.md"]}`},
		{Event{Type: EventRestore, Restore: &RestoreInfo{Op: "rewind", Through: 1, Failed: []FileProblem{{"big", "over the cap"}},
			Conversation: &ConversationRewind{Through: 1, Removed: 9, Archived: "s-x"}}},
			`{"type":"restore","op":"rewind","checkpoint":0,"through":1,"files":[],"failed":[{"path":"big","reason":"over the cap"}],"conversation":{"through":1,"removed":9,"archived":"s-x"}}`},
		{Event{Type: EventRestore}, `{"type":"restore","op":"","checkpoint":0,"files":[]}`},
	} {
		b, err := json.Marshal(tc.ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("got  %s\nwant %s", b, tc.want)
		}
	}
}

// The usage event's optional fields: cached_input_tokens when the server
// said some, cost (micro-units) only when priced — unknown is absent, a
// priced free call is 0.
func TestUsageEventJSON(t *testing.T) {
	cost := func(v int64) *int64 { return &v }
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"tokens only", Event{Type: EventUsage, InputTokens: 10, OutputTokens: 2},
			`{"type":"usage","input_tokens":10,"output_tokens":2}`},
		{"cached", Event{Type: EventUsage, InputTokens: 10, OutputTokens: 2, CachedInputTokens: 8},
			`{"type":"usage","input_tokens":10,"output_tokens":2,"cached_input_tokens":8}`},
		{"priced", Event{Type: EventUsage, InputTokens: 10, OutputTokens: 2, CachedInputTokens: 8, Cost: cost(1234)},
			`{"type":"usage","input_tokens":10,"output_tokens":2,"cached_input_tokens":8,"cost":1234}`},
		{"priced at nothing", Event{Type: EventUsage, InputTokens: 1, OutputTokens: 1, Cost: cost(0)},
			`{"type":"usage","input_tokens":1,"output_tokens":1,"cost":0}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.ev)
			if err != nil || string(b) != tc.want {
				t.Errorf("got %s (%v), want %s", b, err, tc.want)
			}
		})
	}
}
