package doctor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/prompted"
)

// Prompt is what Hearth sends the model before the user's first message.
type Prompt struct {
	// System is the system prompt, the project notes included.
	System string
	// Notes are the project notes in System, to say what each costs.
	Notes []Note
	// Tools are the definitions of the tools offered.
	Tools []llm.ToolSpec
	// MCPServers names configured MCP servers, whose tools are sent too but
	// are not in Tools (they are known only once the servers run).
	MCPServers []string
	// Prompted says the tools are described in the system prompt (the
	// prompted tool protocol), not sent as definitions.
	Prompted bool
}

// Note is one project note (AGENTS.md, HEARTH.md) in the system prompt.
type Note struct {
	Name string
	Text string
}

// Tokens estimates the prompt in tokens as the agent does when it decides
// to compress (agent.EstimateTokens: about four bytes a token).
func (p *Prompt) Tokens() int { return p.systemTokens() + p.toolTokens() }

func (p *Prompt) systemTokens() int {
	return agent.EstimateTokens([]llm.Message{{Role: llm.RoleSystem, Content: p.System}}, nil)
}

func (p *Prompt) toolTokens() int {
	if p.Prompted {
		return agent.EstimateTokens([]llm.Message{{Role: llm.RoleSystem, Content: prompted.SystemPrompt(p.Tools, "")}}, nil)
	}
	return agent.EstimateTokens(nil, p.Tools)
}

// The thresholds of the prompt check.
const (
	// minRoom is the least a window must hold besides the prompt: the
	// user's first message and a short answer.
	minRoom = 1024
	// maxPromptShare is the largest share of the window the prompt may take
	// before the conversation is cramped. When a conversation reaches 70 %
	// of the window the agent summarises older turns down to 40 % of the
	// window, the prompt included: a prompt above that share leaves nothing
	// of the conversation after a summary, and little room before one (a
	// file or two).
	maxPromptShare = 0.4
)

// promptCheck compares what Hearth sends before the first message with the
// model's window.
func promptCheck(kind string, m *llm.ModelInfo, p *Prompt, err error) Check {
	if err != nil {
		return Check{Name: "prompt", Status: Skip, Detail: "not measured: " + err.Error()}
	}
	total := p.Tokens()
	parts := "system prompt " + kTokens(p.systemTokens())
	if len(p.Notes) > 0 {
		var notes []string
		for _, n := range p.Notes {
			notes = append(notes, n.Name+" "+kTokens(llm.EstimateTokens(n.Text)))
		}
		parts += " with " + strings.Join(notes, ", ")
	}
	parts += fmt.Sprintf(", %d tools %s", len(p.Tools), kTokens(p.toolTokens()))
	parts += "; an estimate"
	if len(p.MCPServers) > 0 {
		parts += fmt.Sprintf("; not counted: the tools of the MCP server%s %s, known once they start",
			pluralS(len(p.MCPServers)), clipList(p.MCPServers, 4))
	}
	n := m.ContextLength
	switch {
	case n == 0:
		return Check{Name: "prompt", Status: OK,
			Detail: fmt.Sprintf("≈%s tokens before your first message (%s); the window is not known", kTokens(total), parts)}
	case total+minRoom > n:
		over := "leaves no room for your message and the answer"
		if total > n {
			over = "is larger than the whole window"
		}
		return Check{Name: "prompt", Status: Fail,
			Detail: fmt.Sprintf("≈%s of %s tokens before your first message: it %s (%s)", kTokens(total), kTokens(n), over, parts),
			Fix:    windowFix(kind, m, p, total)}
	case float64(total) > maxPromptShare*float64(n):
		left := n - total
		return Check{Name: "prompt", Status: Warn,
			Detail: fmt.Sprintf("≈%s of %s tokens before your first message, leaving %s (%d%%) for the conversation: a file or two fills it, and summarising cannot make room (%s)",
				kTokens(total), kTokens(n), kTokens(left), left*100/n, parts),
			Fix: windowFix(kind, m, p, total)}
	}
	return Check{Name: "prompt", Status: OK,
		Detail: fmt.Sprintf("≈%s of %s tokens before your first message (%s)", kTokens(total), kTokens(n), parts)}
}

// windowFix says how to make room: a window the prompt takes at most
// maxPromptShare of, where the model allows one, or a smaller prompt.
func windowFix(kind string, m *llm.ModelInfo, p *Prompt, total int) string {
	less := "send less: fewer tools (tools = [...] in the profile's table of config.toml"
	if len(p.MCPServers) > 0 {
		less += ", or fewer MCP servers"
	}
	less += ")"
	if len(p.Notes) > 0 {
		var names []string
		for _, n := range p.Notes {
			names = append(names, n.Name)
		}
		less += " or shorter project notes (" + strings.Join(names, ", ") + ")"
	}
	want := MinContext
	for float64(total) > maxPromptShare*float64(want) {
		want *= 2
	}
	if t := m.TrainedContextLength; t > 0 && want > t {
		if float64(total) > maxPromptShare*float64(t) {
			return fmt.Sprintf("the model's longest window is %s tokens: %s, or choose a model with a longer context", kTokens(t), less)
		}
		want = t
	}
	if kind == "ollama" {
		return fmt.Sprintf("give the model a larger window: HEARTH_NUM_CTX=%d (or num_ctx = %d in the provider's table of config.toml), or set the model's own (a Modelfile with PARAMETER num_ctx %d, then `ollama create`); or %s",
			want, want, want, less)
	}
	return fmt.Sprintf("start the server with a larger window (llama.cpp: -c %d; vLLM: --max-model-len %d; LM Studio: the model's context length), or %s", want, want, less)
}

// kTokens writes a token count short: 412 → "0.4k", 2150 → "2.1k",
// 16384 → "16k".
func kTokens(n int) string {
	if n < 100 {
		return strconv.Itoa(n)
	}
	s := strconv.FormatFloat(float64(n)/1024, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0") + "k"
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
