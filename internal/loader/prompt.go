package loader

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/hearth-agent/hearth/llm"
)

// Prompt is what a run sends the model before the user's first message: the
// system prompt and the tool definitions.
type Prompt struct {
	// Profile names the profile they come from.
	Profile string
	// System is the system prompt, the project notes included.
	System string
	// Notes are the project notes at the end of System, in order.
	Notes []Note
	// Tools are the definitions of the tools offered: the built-in ones
	// and the sub-agents the profile allows.
	Tools []llm.ToolSpec
	// MCPServers names the configured MCP servers. Their tools are not in
	// Tools: they are known only once the servers run.
	MCPServers []string
}

// Note is one project note (HEARTH.md, AGENTS.md) as the system prompt
// carries it.
type Note struct {
	Name string
	Text string
}

// FirstPrompt builds the agent as Start does — the profile, its system
// prompt with the project notes, the built-in tools and the sub-agents —
// without opening the session store or starting MCP servers, and returns
// what its first request carries besides the user's message. Options are
// those of Start; their Warn receives the same sentences.
func FirstPrompt(ctx context.Context, o Options) (*Prompt, error) {
	o.NoStore, o.NoMCP = true, true
	bot, l, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	defer bot.Close()
	p := &Prompt{Profile: l.ProfileName, System: l.Config.Profile.System,
		MCPServers: slices.Sorted(maps.Keys(l.File.MCPServers))}
	p.Notes = notesIn(p.System)
	for _, name := range bot.Tools() {
		if sp, _, ok := bot.ToolSpec(name); ok {
			p.Tools = append(p.Tools, sp)
		}
	}
	return p, nil
}

// notesIn finds the project notes ProjectNotes put at the end of a system
// prompt.
func notesIn(system string) []Note {
	type at struct {
		name       string
		start, end int
	}
	var found []at
	for _, name := range contextFiles {
		marker := "\n\nProject notes from " + name + ":\n"
		if i := strings.LastIndex(system, marker); i >= 0 {
			found = append(found, at{name, i, i + len(marker)})
		}
	}
	slices.SortFunc(found, func(a, b at) int { return a.start - b.start })
	var out []Note
	for i, f := range found {
		end := len(system)
		if i+1 < len(found) {
			end = found[i+1].start
		}
		out = append(out, Note{Name: f.name, Text: system[f.end:end]})
	}
	return out
}
