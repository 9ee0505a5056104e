package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

func TestFormatCost(t *testing.T) {
	tests := []struct {
		cost            int64
		calls, unpriced int
		currency, want  string
	}{
		{12345, 3, 0, "USD", "0.012345 USD"},
		{3_000_000, 1, 0, "USD", "3.00 USD"},
		{100_000, 1, 0, "", "0.10"},
		{0, 2, 0, "EUR", "0.00 EUR"},
		{1, 1, 0, "USD", "0.000001 USD"},
		{0, 4, 4, "USD", "unknown"},
		{10_000, 4, 3, "USD", "≥ 0.01 USD (3 calls unpriced)"},
		{10_000, 4, 1, "USD", "≥ 0.01 USD (1 call unpriced)"},
		{0, 0, 0, "USD", ""},
	}
	for _, tc := range tests {
		if got := formatCost(tc.cost, tc.calls, tc.unpriced, tc.currency); got != tc.want {
			t.Errorf("formatCost(%d, %d, %d, %q) = %q, want %q", tc.cost, tc.calls, tc.unpriced, tc.currency, got, tc.want)
		}
	}
	c := int64(250_000)
	for _, tc := range []struct {
		s    session.Session
		want string
	}{
		{session.Session{}, ""},
		{session.Session{Unpriced: 2}, "unknown"},
		{session.Session{Cost: &c}, "0.25 USD"},
		{session.Session{Cost: &c, Unpriced: 2}, "≥ 0.25 USD (2 calls unpriced)"},
	} {
		if got := sessionCost(&tc.s, "USD"); got != tc.want {
			t.Errorf("sessionCost(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{"7d", now.AddDate(0, 0, -7), false},
		{"0d", now, false},
		{"12h", now.Add(-12 * time.Hour), false},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), false},
		{"2026-11-01T10:00:00Z", time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), false},
		{"last week", time.Time{}, true},
		{"-3d", time.Time{}, true},
	}
	for _, tc := range tests {
		got, err := parseSince(tc.in, now)
		if (err != nil) != tc.bad || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v", tc.in, got, err)
		}
	}
	for _, by := range []string{"day", "model", "session", "workspace"} {
		if _, err := usageBy(by); err != nil {
			t.Error(err)
		}
	}
	if _, err := usageBy("week"); err == nil {
		t.Error("--by week accepted")
	}
}

// usageJSON is `hearth usage --json`.
type usageJSON struct {
	By       string     `json:"by"`
	Currency string     `json:"currency"`
	Rows     []usageRow `json:"rows"`
	Total    usageRow   `json:"total"`
}

func (e *e2e) usage(args ...string) usageJSON {
	e.t.Helper()
	code, out, errOut := e.run("", append([]string{"usage", "--json"}, args...)...)
	var u usageJSON
	if code != 0 || json.Unmarshal([]byte(out), &u) != nil {
		e.t.Fatalf("usage --json %v: %d\n%s\n%s", args, code, out, errOut)
	}
	return u
}

func (e *e2e) config(toml string) {
	e.t.Helper()
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(toml), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// Many calls of varied sizes, at a price with six decimals: each turn's
// cost in --output-format json, and every total of `hearth usage`, are
// exactly the sums of each call's rounded cost.
func TestE2EUsageCostExact(t *testing.T) {
	e := newE2E(t)
	e.config("[pricing]\ncurrency = \"USD\"\n[pricing.models.m]\ninput = 0.150001\noutput = \"0.600007\"\n")
	os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("a\n"), 0o644)
	r, err := pricing.Price{Input: "0.150001", Output: "0.600007"}.Rates()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var want int64
	calls := 0
	sessions := map[string]int64{}
	for i := range 24 {
		var turn int64
		var scs []llmtest.Scenario
		if i%3 == 0 {
			in, out := 1600+rng.IntN(6_000), rng.IntN(40)
			scs = append(scs, llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"a.txt"}`), llmtest.Usage(in, out)))
			c, _ := r.Cost(pricing.Tokens{Input: int64(in), Output: int64(out)})
			turn += c
		}
		in, out := 1600+rng.IntN(6_000), 1+rng.IntN(5000)
		scs = append(scs, llmtest.OllamaStream("m", llmtest.Text(fmt.Sprint("answer ", i)), llmtest.Usage(in, out)))
		c, _ := r.Cost(pricing.Tokens{Input: int64(in), Output: int64(out)})
		turn += c
		e.srv.Enqueue("/api/chat", scs...)
		ctxName := fmt.Sprint("cost-", i%2) // two sessions
		code, stdout, stderr := e.run("", "run", "--context", ctxName, "--output-format", "json", fmt.Sprint("question ", i))
		var j jsonResult
		if code != 0 || json.Unmarshal([]byte(stdout), &j) != nil {
			t.Fatalf("turn %d: %d\n%s\n%s", i, code, stdout, stderr)
		}
		if j.Cost == nil || *j.Cost != turn || j.Unpriced != 0 {
			t.Fatalf("turn %d: cost %v unpriced %d, want %d\n%s", i, j.Cost, j.Unpriced, turn, stdout)
		}
		want += turn
		calls += len(scs)
		sessions[j.SessionID] += turn
	}
	u := e.usage()
	if u.By != "day" || u.Currency != "USD" || u.Total.Cost == nil || *u.Total.Cost != want || u.Total.Calls != calls || u.Total.Unpriced != 0 {
		t.Errorf("total %+v (cost %v), want %d over %d calls", u.Total, u.Total.Cost, want, calls)
	}
	for _, by := range []string{"model", "session", "workspace", "day"} {
		u := e.usage("--by", by)
		var sum int64
		for _, row := range u.Rows {
			if row.Cost == nil {
				t.Fatalf("by %s: %+v unknown", by, row)
			}
			sum += *row.Cost
			if by == "session" && *row.Cost != sessions[row.Key] {
				t.Errorf("session %s: %d, want %d", row.Key, *row.Cost, sessions[row.Key])
			}
		}
		if sum != want {
			t.Errorf("by %s: %d, want %d", by, sum, want)
		}
	}
	if u := e.usage("--model", "other"); len(u.Rows) != 0 || u.Total.Calls != 0 {
		t.Errorf("--model other: %+v", u)
	}
	// --workspace: the folder's calls only (every call here ran in e.ws).
	if u := e.usage("--workspace", t.TempDir()); len(u.Rows) != 0 || u.Total.Calls != 0 {
		t.Errorf("--workspace elsewhere: %+v", u)
	}
	if u := e.usage("--workspace", e.ws); u.Total.Cost == nil || *u.Total.Cost != want || u.Total.Calls != calls {
		t.Errorf("--workspace %s: %+v, want %d", e.ws, u.Total, want)
	}
	var one string
	for id := range sessions {
		one = id
	}
	if u := e.usage("--session", one, "--since", "1d"); u.Total.Cost == nil || *u.Total.Cost != sessions[one] {
		t.Errorf("--session %s: %+v, want %d", one, u.Total, sessions[one])
	}

	code, out, errOut := e.run("", "usage", "--by", "model")
	if amount := formatAmount(want, "USD"); code != 0 || !strings.Contains(out, "COST") || !strings.Contains(out, amount) {
		t.Errorf("usage table: %d\n%s\n%s\nwant %s", code, out, errOut, amount)
	}
	code, out, _ = e.run("", "sessions", "show", one)
	if amount := formatAmount(sessions[one], "USD"); code != 0 || !strings.Contains(out, "· cost "+amount) {
		t.Errorf("sessions show: %d\n%s\nwant cost %s", code, out, amount)
	}
}

// A model without a price shows unknown (never 0), in the table and as
// null in JSON; rows recorded before prices existed (nil cost, as an older
// Hearth left them) count as unpriced; a sum that misses some is partial.
func TestE2EUsageUnknownAndPartial(t *testing.T) {
	e := newE2E(t)
	reply := func() llmtest.Scenario { return llmtest.OllamaStream("m", llmtest.Text("ok"), llmtest.Usage(2000, 10)) }

	e.srv.Enqueue("/api/chat", reply())
	code, stdout, _ := e.run("", "run", "--output-format", "json", "hi")
	var j jsonResult
	if code != 0 || json.Unmarshal([]byte(stdout), &j) != nil || j.Cost != nil || j.Unpriced != 1 || !strings.Contains(stdout, `"cost": null`) {
		t.Fatalf("unpriced run: %d\n%s", code, stdout)
	}
	if u := e.usage(); u.Total.Cost != nil || u.Total.Unpriced != 1 || len(u.Rows) != 1 || u.Rows[0].Cost != nil {
		t.Errorf("unpriced usage: %+v", u)
	}
	code, out, _ := e.run("", "usage")
	if code != 0 || !strings.Contains(out, "unknown") || strings.Contains(out, "0.00") {
		t.Errorf("unpriced table: %d\n%s", code, out)
	}
	if code, out, _ := e.run("", "sessions", "show", j.SessionID); code != 0 || !strings.Contains(out, "· cost unknown") {
		t.Errorf("sessions show: %d\n%s", code, out)
	}

	// A row as an older Hearth recorded it: no cost.
	st := e.store()
	if err := st.RecordUsage(context.Background(), session.Usage{SessionID: j.SessionID, Model: "m", InputTokens: 500, OutputTokens: 5}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// Priced from now on: the sum is partial.
	e.config("[pricing]\ncurrency = \"EUR\"\n[pricing.models.m]\ninput = 1\noutput = 2\n")
	e.srv.Enqueue("/api/chat", reply())
	code, stdout, _ = e.run("", "run", "--output-format", "json", "--context", j.SessionID, "again")
	var j2 jsonResult
	const turn = 2000*1 + 10*2 // micro-units: tokens × price per million
	if code != 0 || json.Unmarshal([]byte(stdout), &j2) != nil || j2.Cost == nil || *j2.Cost != turn || j2.Unpriced != 0 {
		t.Fatalf("priced run: %d\n%s", code, stdout)
	}
	u := e.usage()
	if u.Total.Cost == nil || *u.Total.Cost != turn || u.Total.Unpriced != 2 || u.Total.Calls != 3 || u.Currency != "EUR" {
		t.Errorf("partial usage: %+v (cost %v)", u.Total, u.Total.Cost)
	}
	code, out, _ = e.run("", "usage")
	if want := "≥ 0.00202 EUR (2 calls unpriced)"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("partial table: %d\n%s\nwant %s", code, out, want)
	}
	if code, out, _ := e.run("", "sessions", "show", j.SessionID); code != 0 || !strings.Contains(out, "· cost ≥ 0.00202 EUR (2 calls unpriced)") {
		t.Errorf("sessions show: %d\n%s", code, out)
	}

	// A bad price is a configuration error: exit 2, naming the model.
	e.config("[pricing.models.m]\ninput = 0.1234567\noutput = 1\n")
	code, _, errOut := e.run("", "run", "hi")
	if code != 2 || !strings.Contains(errOut, `[pricing.models."m"] input`) {
		t.Errorf("bad price: %d %s", code, errOut)
	}
}

// On a machine with no sessions, usage says so (and --json is empty).
func TestUsageNoStore(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HEARTH_HOME": home, "HOME": home}
	code, out, errOut := runHearth(t, env, "usage")
	if code != 0 || out != "" || !strings.Contains(errOut, "No model calls recorded yet") {
		t.Errorf("%d %q %q", code, out, errOut)
	}
	code, out, _ = runHearth(t, env, "usage", "--json")
	var u usageJSON
	if code != 0 || json.Unmarshal([]byte(out), &u) != nil || len(u.Rows) != 0 || u.Total.Cost != nil || u.Total.Calls != 0 {
		t.Errorf("%d %q", code, out)
	}
	if code, _, errOut := runHearth(t, env, "usage", "--by", "week"); code != 2 || !strings.Contains(errOut, "--by") {
		t.Errorf("--by week: %d %s", code, errOut)
	}
}
