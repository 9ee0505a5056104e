package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/internal/investigator"
)

// Sub-agents' events and reports, rendered for people.

// renderEvent is a child event in a line for plain UIs ("" for events they
// need not show: reasoning and answer deltas, thinking_reclassified which
// corrects them, usage, done).
func renderEvent(ev Event) string {
	switch ev.Type {
	case EventSession:
		return fmt.Sprintf("[sub-agent session %s]\n", ev.SessionID)
	case EventToolCall:
		return fmt.Sprintf("→ %s %s\n", ev.Name, clipText(compactJSON(ev.Args), 160))
	case EventToolResult:
		if ev.OK {
			return fmt.Sprintf("✓ %s\n", ev.Name)
		}
		return fmt.Sprintf("✗ %s: %s\n", ev.Name, clipText(ev.Error, 200))
	case EventError:
		return fmt.Sprintf("error: %s\n", ev.Error)
	}
	return ""
}

// renderReport shows a report to people: the summary, then the files.
// Reports of other shapes are shown as indented JSON.
func renderReport(name string, report json.RawMessage, sessionID string) string {
	var r investigator.Report
	var b strings.Builder
	if json.Unmarshal(report, &r) == nil && r.Summary != "" {
		b.WriteString(r.Summary)
		b.WriteString("\n")
		for _, f := range r.RelevantFiles {
			fmt.Fprintf(&b, "\n• %s", f.Path)
			for i, l := range f.Lines {
				if i == 0 {
					b.WriteString(" (lines ")
				} else {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%d–%d", l.Start, l.End)
				if i == len(f.Lines)-1 {
					b.WriteString(")")
				}
			}
			if f.Reason != "" {
				b.WriteString(": " + f.Reason)
			}
		}
		if len(r.OpenQuestions) > 0 {
			b.WriteString("\n\nOpen questions:")
			for _, q := range r.OpenQuestions {
				b.WriteString("\n? " + q)
			}
		}
	} else {
		var out bytes.Buffer
		if json.Indent(&out, report, "", "  ") != nil {
			out.Reset()
			out.Write(report)
		}
		b.Write(out.Bytes())
	}
	if sessionID != "" {
		fmt.Fprintf(&b, "\n\n(%s's session: %s)", name, sessionID)
	}
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	return string(compactRaw(raw))
}

func compactRaw(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
