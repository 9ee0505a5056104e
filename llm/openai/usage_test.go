package openai

import (
	"testing"

	"github.com/valyala/fastjson"

	"github.com/hearth-agent/hearth/llm"
)

// The usage object's counts, with the prompt cache's share of the input
// where the server gives it.
func TestUsageOf(t *testing.T) {
	tests := []struct {
		body string
		want *llm.Usage
	}{
		{`{"usage":{"prompt_tokens":100,"completion_tokens":7}}`, &llm.Usage{InputTokens: 100, OutputTokens: 7}},
		{`{"usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":64}}}`,
			&llm.Usage{InputTokens: 100, OutputTokens: 7, CachedInputTokens: 64}},
		{`{"usage":{"prompt_tokens":100,"completion_tokens":7,"prompt_tokens_details":null}}`, &llm.Usage{InputTokens: 100, OutputTokens: 7}},
		{`{"usage":{"prompt_tokens":10,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":64}}}`,
			&llm.Usage{InputTokens: 10, OutputTokens: 7, CachedInputTokens: 10}}, // never more than the input
		{`{"usage":{"prompt_tokens":10,"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":-3}}}`,
			&llm.Usage{InputTokens: 10, OutputTokens: 7}},
		{`{"usage":null}`, nil},
		{`{}`, nil},
	}
	for _, tc := range tests {
		v, err := fastjson.Parse(tc.body)
		if err != nil {
			t.Fatal(err)
		}
		got := usageOf(v)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.body, got, tc.want)
		}
	}
}
