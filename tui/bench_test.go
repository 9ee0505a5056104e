package tui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
)

// longAnswer is a Markdown answer of about n lines, the mix a model
// writes: headings, prose, lists, code blocks, tables.
func longAnswer(n int) string {
	var b strings.Builder
	lines := 0
	for sec := 1; lines < n; sec++ {
		fmt.Fprintf(&b, "## Step %d: change the handler\n\n", sec)
		b.WriteString("The handler reads the **request body** once and keeps it, so a retry can send it again; the `Content-Length` header\nis set from the kept bytes. This keeps the retry loop simple and makes the failure visible.\n\n")
		for i := 1; i <= 5; i++ {
			fmt.Fprintf(&b, "- item %d: check `err` and return early with a wrapped error\n", i)
		}
		b.WriteString("\n```go\n")
		for i := 0; i < 14; i++ {
			fmt.Fprintf(&b, "\tif err := step%d(ctx, req); err != nil { // %d\n\t\treturn fmt.Errorf(\"step %d: %%w\", err)\n\t}\n", i, i, i)
		}
		b.WriteString("```\n\n| case | before | after |\n|---|---|---|\n| empty body | panic | error |\n| retry | lost body | resent |\n\n")
		lines = strings.Count(b.String(), "\n")
	}
	return b.String()
}

// BenchmarkStreamAnswer renders a 2,000-line answer streamed in chunks of
// 3–12 bytes, one update (the event, the layout, the view) per chunk, with
// nothing coalesced. It reports the median and the 95th percentile of one
// update.
func BenchmarkStreamAnswer(b *testing.B) {
	text := longAnswer(2000)
	rng := rand.New(rand.NewPCG(1, 2))
	var parts []string
	for s := text; len(s) > 0; {
		n := min(3+rng.IntN(10), len(s))
		parts = append(parts, s[:n])
		s = s[n:]
	}
	var times, late []time.Duration
	for b.Loop() {
		f := newFixture(b, 120, 40)
		f.busyTurn()
		for i, p := range parts {
			start := time.Now()
			f.m.Update(eventMsg{agent.Event{Type: agent.EventTextDelta, Text: p}})
			_ = f.m.View()
			d := time.Since(start)
			times = append(times, d)
			if i >= len(parts)*9/10 {
				late = append(late, d)
			}
		}
		f.m.Close()
		f.bot.Close()
	}
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/update-median")
	b.ReportMetric(float64(times[len(times)*95/100].Microseconds())/1000, "ms/update-p95")
	// The last tenth of the answer costs what the first did: no
	// re-rendering of what is already done.
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2].Microseconds())/1000, "ms/update-median-last10%")
	b.ReportMetric(float64(len(parts)), "updates/answer")
}
