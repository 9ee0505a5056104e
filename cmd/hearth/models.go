package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/prompted"
)

func (a *app) modelsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models the server has, with what each can do",
		Long: `List the models the configured server has: size, context window, and
capabilities (tools, thinking, vision), and how Hearth will give each its
tools: "native" (the server's tool calling) or "prompted" (the tools described
in the prompt and the calls read from the model's text, for models that
cannot call tools; docs/tool-protocol.md). Ollama says what each model can
do; OpenAI-compatible servers do not, and their capabilities show as "?"
unless configured: such a model is sent tools natively ("native?"), and
prompted from the first time the server refuses them. --tool-mode chooses
for every model; --json says why for each.`,
		Example: `  hearth models
  hearth models --json
  hearth --provider openai --base-url http://localhost:1234/v1 models`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, cfg, err := a.provider()
			if err != nil {
				return err
			}
			models, err := llm.Models(cmd.Context(), p)
			if err != nil {
				return err
			}
			refused := a.refusedAt(cfg)
			modes := make([]prompted.Decision, len(models))
			for i := range models {
				var at time.Time
				if refused != nil {
					at = refused(models[i].Name)
				}
				modes[i] = prompted.DecideFor(prompted.Mode(cfg.ToolMode), &models[i], at)
			}
			if asJSON {
				out := make([]modelJSON, len(models))
				for i, m := range models {
					out[i] = modelJSON{ModelInfo: m, ToolMode: string(modes[i].Mode), ToolModeReason: modes[i].Reason}
				}
				enc := json.NewEncoder(a.io.out)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			if len(models) == 0 {
				fmt.Fprintln(a.io.err, "The server has no models.")
				if p.Kind() == "ollama" {
					fmt.Fprintln(a.io.err, "Pull one, e.g. `ollama pull qwen3:4b`.")
				}
				return nil
			}
			w := tabwriter.NewWriter(a.io.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tPARAMS\tQUANT\tCONTEXT\tCAPABILITIES\tTOOLS")
			for i, m := range models {
				// The server names its models: shown, they are stripped of
				// control sequences (the JSON keeps them).
				tools := string(modes[i].Mode)
				if !m.CapabilitiesKnown && modes[i].Mode == prompted.Native && cfg.ToolMode != string(prompted.Native) {
					tools += "?"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", termtext.String(m.Name), termtext.String(dash(m.ParameterSize)), termtext.String(dash(m.Quantization)), contextOf(m), termtext.String(capsOf(m)), tools)
			}
			return w.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	return cmd
}

// modelJSON is one model in `hearth models --json`: what the server says,
// and how Hearth will give it tools, and why.
type modelJSON struct {
	llm.ModelInfo
	ToolMode       string `json:"tool_mode"`
	ToolModeReason string `json:"tool_mode_reason"`
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func contextOf(m llm.ModelInfo) string {
	switch {
	case m.ContextLength > 0 && m.TrainedContextLength > m.ContextLength:
		return fmt.Sprintf("%d/%d", m.ContextLength, m.TrainedContextLength)
	case m.ContextLength > 0:
		return fmt.Sprint(m.ContextLength)
	case m.TrainedContextLength > 0:
		return fmt.Sprint(m.TrainedContextLength)
	}
	return "-"
}

func capsOf(m llm.ModelInfo) string {
	if !m.CapabilitiesKnown {
		return "?"
	}
	if len(m.Capabilities) == 0 {
		return "-"
	}
	s := make([]string, len(m.Capabilities))
	for i, c := range m.Capabilities {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}
