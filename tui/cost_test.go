package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/session"
)

func micro(n int64) *int64 { return &n }

func TestFormatCost(t *testing.T) {
	tests := []struct {
		name            string
		cost            *int64
		unpriced, calls int
		want            string
	}{
		{"every call priced", micro(1_500_000), 0, 3, "1.50"},
		{"six decimals", micro(1_750_001), 0, 2, "1.750001"},
		{"a fraction of a cent", micro(250), 0, 1, "0.00025"},
		{"priced at zero", micro(0), 0, 1, "0.00"},
		{"none priced", nil, 3, 3, "unknown"},
		{"none priced, a session's (no count of calls)", nil, 2, 0, "unknown"},
		{"some unpriced", micro(1_750_001), 2, 4, "≥ 1.750001 (2 calls unpriced)"},
		{"one unpriced", micro(10_000), 1, 2, "≥ 0.01 (1 call unpriced)"},
		{"no calls", nil, 0, 0, "none"},
		{"negative", micro(-2_500_000), 0, 1, "-2.50"},
		{"the smallest int64", micro(-9223372036854775808), 0, 1, "-9223372036854.775808"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatCost(tt.cost, tt.unpriced, tt.calls); got != tt.want {
				t.Errorf("formatCost(%v, %d, %d) = %q, want %q", tt.cost, tt.unpriced, tt.calls, got, tt.want)
			}
		})
	}
}

// /stats shows the session's cost and today's (UTC, every session's),
// from the store: unknown when calls were made and none priced, never 0.
func TestStatsShowCost(t *testing.T) {
	f := newFixture(t, 120, 50)
	st := f.bot.Store()
	ctx := context.Background()
	day := f.clock // the model's today
	mine, other := session.Session{Title: "mine"}, session.Session{Title: "other"}
	for _, s := range []*session.Session{&mine, &other} {
		if err := st.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	record := func(u session.Usage) {
		t.Helper()
		if err := st.RecordUsage(ctx, u); err != nil {
			t.Fatal(err)
		}
	}

	// Nothing yet.
	f.slash("/stats")
	if s := f.screen(); !strings.Contains(s, "cost            none") || !strings.Contains(s, "cost today      none") {
		t.Errorf("no calls:\n%s", s)
	}

	// Unpriced calls only: unknown.
	f.m.sessionID = mine.ID
	record(session.Usage{SessionID: mine.ID, Model: "m", InputTokens: 10, OutputTokens: 1, At: day})
	f.m.tr.clear()
	f.slash("/stats")
	if s := f.screen(); !strings.Contains(s, "cost            unknown") || !strings.Contains(s, "cost today      unknown") {
		t.Errorf("unpriced:\n%s", s)
	}

	// Priced calls in this session, yesterday's and another session's.
	record(session.Usage{SessionID: mine.ID, Model: "p", InputTokens: 10, OutputTokens: 1, Cost: micro(1_500_000), At: day})
	record(session.Usage{SessionID: other.ID, Model: "p", InputTokens: 10, OutputTokens: 1, Cost: micro(250_001), At: day})
	record(session.Usage{SessionID: other.ID, Model: "p", InputTokens: 10, OutputTokens: 1, Cost: micro(9_000_000), At: day.Add(-24 * time.Hour)})
	f.m.tr.clear()
	f.slash("/stats")
	s := f.screen()
	if !strings.Contains(s, "cost            ≥ 1.50 (1 call unpriced)") {
		t.Errorf("the session's cost:\n%s", s)
	}
	if !strings.Contains(s, "cost today      ≥ 1.750001 (1 call unpriced)") {
		t.Errorf("today's cost:\n%s", s)
	}
}
