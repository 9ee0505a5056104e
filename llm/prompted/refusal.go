package prompted

import (
	"errors"
	"regexp"
	"strings"

	"github.com/hearth-agent/hearth/llm"
)

// refusal is a server's known way of refusing a request because it carries
// tools the model (or the server as started) cannot take: the HTTP status it
// answers with, and its wording (matched on the whole message, lower-cased
// and trimmed).
type refusal struct {
	status  []int
	pattern *regexp.Regexp
}

// refusals are the known refusals. Each is matched by status and pattern,
// so that an error that merely quotes one (a validation error echoing the
// request, a gateway's page) does not switch a model to the prompted
// protocol:
//
//	Ollama (/api/chat and /v1), 400: "registry.ollama.ai/library/gemma3:latest does not support tools"
//	vLLM without a tool parser, 400: "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"
//	vLLM, a named or required choice, 400: "tool_choice=\"required\" requires --tool-call-parser to be set"
//	llama.cpp's server without --jinja, 500 (or 400): "tools param requires --jinja flag"
//	LM Studio, gateways and other servers, 400: "tools are not supported", "… does not support tool use", …
var refusals = []refusal{
	// Ollama: the model's name, then the phrase, and nothing after it
	// ("does not support tool_choice" is another matter).
	{[]int{400}, regexp.MustCompile(`^(?:\S+|this model|the model) does not support tools\.?$`)},
	{[]int{400}, regexp.MustCompile(`^"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set\.?$`)},
	{[]int{400}, regexp.MustCompile(`^tool_choice=\S+ requires --tool-call-parser to be set\.?$`)},
	{[]int{400, 500}, regexp.MustCompile(`^tools param requires --jinja flag\.?$`)},
	// The generic wordings, anywhere in a 400's message.
	{[]int{400}, regexp.MustCompile(`\b(?:tools are not supported|tool use is not supported|tool calling is not supported|tool calls are not supported|function calling is not supported|(?:doesn't|do not) support tools|(?:does not|doesn't|do not) support (?:tool use|tool calling|tool calls|function calling))\b`)},
}

// isToolsRefusal reports whether err is a server's refusal of a request
// because it carries tools: an *llm.Error with one of the known statuses
// and wordings (refusals).
func isToolsRefusal(err error) bool {
	var e *llm.Error
	if !errors.As(err, &e) || (e.Code != llm.CodeInvalidRequest && e.Code != llm.CodeServer) {
		return false
	}
	msg := strings.ToLower(strings.TrimSpace(e.Message))
	for _, r := range refusals {
		for _, st := range r.status {
			if st == e.Status && r.pattern.MatchString(msg) {
				return true
			}
		}
	}
	return false
}
