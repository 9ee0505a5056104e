package prompted

import (
	"errors"
	"strings"

	"github.com/hearth-agent/hearth/llm"
)

// refusalMarkers are what servers say, lower-cased, when they refuse a
// request because it carries tools the model (or the server as started)
// cannot take:
//
//	Ollama (/api/chat and /v1), 400: "registry.ollama.ai/library/gemma3:latest does not support tools"
//	vLLM without a tool parser, 400: "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set"
//	vLLM, a named or required choice: "… requires --tool-call-parser"
//	llama.cpp's server without --jinja (400 or 500): "tools param requires --jinja flag"
//	gateways and other servers: "tools are not supported", "… does not support tool use"
var refusalMarkers = []string{
	"does not support tools",
	"does not support tool",
	"doesn't support tool",
	"do not support tool",
	"tools are not supported",
	"tool use is not supported",
	"tool calling is not supported",
	"tool calls are not supported",
	"function calling is not supported",
	"--enable-auto-tool-choice",
	"--tool-call-parser",
	"requires --jinja",
}

// isToolsRefusal reports whether err is a server's refusal of a request
// because it carries tools: an *llm.Error that rejects the request (or a
// server error: llama.cpp answers 500) with one of the known wordings.
func isToolsRefusal(err error) bool {
	var e *llm.Error
	if !errors.As(err, &e) || (e.Code != llm.CodeInvalidRequest && e.Code != llm.CodeServer) {
		return false
	}
	msg := strings.ToLower(e.Message)
	for _, m := range refusalMarkers {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
