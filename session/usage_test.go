package session

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

func i64(v int64) *int64 { return &v }

// usageKey is the key of a usage row in a grouping (as UsageTotals says
// it), given its session's workspace.
func usageKey(u Usage, workspace, by string) string {
	switch by {
	case BySession:
		return u.SessionID
	case ByModel:
		return u.Model
	case ByWorkspace:
		return workspace
	case ByDay:
		return u.At.UTC().Format("2006-01-02")
	}
	return ""
}

// sumUsage is UsageTotals computed in Go from the rows recorded.
func sumUsage(rows []Usage, workspaces map[string]string, f UsageFilter, by string) []UsageTotal {
	totals := map[string]*UsageTotal{}
	if by == ByTotal {
		totals[""] = &UsageTotal{}
	}
	for _, u := range rows {
		ws := workspaces[u.SessionID]
		at := u.At.Truncate(time.Millisecond)
		if !f.Since.IsZero() && at.Before(f.Since) || !f.Until.IsZero() && !at.Before(f.Until) ||
			f.SessionID != "" && u.SessionID != f.SessionID || f.Model != "" && u.Model != f.Model ||
			f.Workspace != nil && ws != *f.Workspace {
			continue
		}
		k := usageKey(u, ws, by)
		t := totals[k]
		if t == nil {
			t = &UsageTotal{Key: k}
			totals[k] = t
		}
		t.Calls++
		t.InputTokens += int64(u.InputTokens)
		t.OutputTokens += int64(u.OutputTokens)
		t.CachedInputTokens += int64(u.CachedInputTokens)
		if u.Cost == nil {
			t.Unpriced++
		} else {
			t.Cost += *u.Cost
		}
	}
	out := []UsageTotal{}
	for _, t := range totals {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// TestUsageTotals: many calls with varied costs (some without a price)
// sum exactly to the micro-unit, by every grouping and filter, the
// workspace through the sessions (the unknown one included); calls
// without a price count as Unpriced, never as 0.
func TestUsageTotals(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		workspaces := map[string]string{"a1": "/w/a", "a2": "/w/a", "kid": "/w/a", "b1": "/w/b", "Z": "/w/Z", "none": ""}
		for _, id := range []string{"a1", "a2", "b1", "Z", "none", "kid"} {
			se := &Session{ID: id, Workspace: workspaces[id]}
			if id == "kid" {
				se.ParentID = "a1"
			}
			if err := s.Create(ctx, se); err != nil {
				t.Fatal(err)
			}
		}
		ids := []string{"a1", "a2", "b1", "Z", "none", "kid"}
		models := []string{"gpt-x", "qwen3:4b", "Claude", "local"}
		r := rand.New(rand.NewPCG(20, 1))
		day := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		var rows []Usage
		for i := range 1000 {
			u := Usage{
				SessionID:    ids[r.IntN(len(ids))],
				Model:        models[r.IntN(len(models))],
				InputTokens:  r.IntN(200_000),
				OutputTokens: r.IntN(8_000),
				At:           day.Add(time.Duration(r.Int64N(int64(5 * 24 * time.Hour)))),
			}
			u.CachedInputTokens = r.IntN(u.InputTokens + 1)
			switch {
			case u.Model == "local":
				// No price known for it.
			case i%97 == 0:
				// A free call: priced, at 0.
				u.Cost = i64(0)
			case i%101 == 0:
				// Large enough that a float64 sum would lose the unit.
				u.Cost = i64(4_000_000_000_000_001)
			default:
				u.Cost = i64(r.Int64N(50_000_000) + 1)
			}
			rows = append(rows, u)
		}
		// A call in another zone counts on its UTC day.
		rows = append(rows, Usage{SessionID: "none", Model: "gpt-x", InputTokens: 1, OutputTokens: 1, Cost: i64(7),
			At: time.Date(2026, 3, 2, 22, 30, 0, 0, time.FixedZone("UTC-3", -3*3600))})
		for _, u := range rows {
			if err := s.RecordUsage(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		var exact int64
		var big int
		for _, u := range rows {
			if u.Cost != nil {
				exact += *u.Cost
				if *u.Cost > 1e15 {
					big++
				}
			}
		}
		if big < 2 || exact <= 1<<53 {
			t.Fatalf("the rows do not test exactness: %d large costs, sum %d", big, exact)
		}

		filters := []struct {
			name string
			f    UsageFilter
		}{
			{"all", UsageFilter{}},
			{"since", UsageFilter{Since: day.Add(36 * time.Hour)}},
			{"until", UsageFilter{Until: day.Add(50 * time.Hour)}},
			{"a day", UsageFilter{Since: day.AddDate(0, 0, 2), Until: day.AddDate(0, 0, 3)}},
			{"a session", UsageFilter{SessionID: "a1"}},
			{"a sub-agent's session", UsageFilter{SessionID: "kid"}},
			{"a model", UsageFilter{Model: "qwen3:4b"}},
			{"the model without a price", UsageFilter{Model: "local"}},
			{"a workspace", UsageFilter{Workspace: strp("/w/a")}},
			{"the unknown workspace", UsageFilter{Workspace: strp("")}},
			{"a workspace without sessions", UsageFilter{Workspace: strp("/w/c")}},
			{"a model in a workspace since", UsageFilter{Model: "gpt-x", Workspace: strp("/w/b"), Since: day.AddDate(0, 0, 1)}},
			{"nothing", UsageFilter{SessionID: "nope"}},
		}
		for _, tc := range filters {
			for _, by := range []string{ByTotal, BySession, ByModel, ByWorkspace, ByDay} {
				got, err := s.UsageTotals(ctx, tc.f, by)
				want := sumUsage(rows, workspaces, tc.f, by)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s, by %q:\n got %+v %v\nwant %+v", tc.name, by, got, err, want)
				}
			}
		}
		// The grand total, checked by hand as well.
		all, err := s.UsageTotals(ctx, UsageFilter{}, ByTotal)
		if err != nil || len(all) != 1 || all[0].Cost != exact || all[0].Calls != len(rows) || all[0].Unpriced == 0 {
			t.Errorf("grand total %+v %v, want cost %d", all, err, exact)
		}
		if local, _ := s.UsageTotals(ctx, UsageFilter{Model: "local"}, ByTotal); len(local) != 1 || local[0].Cost != 0 || local[0].Unpriced != local[0].Calls || local[0].Calls == 0 {
			t.Errorf("the model without a price: %+v", local)
		}
		if ws, _ := s.UsageTotals(ctx, UsageFilter{}, ByWorkspace); len(ws) != 4 || ws[0].Key != "" || ws[1].Key != "/w/Z" || ws[2].Key != "/w/a" {
			t.Errorf("by workspace, in byte order, the unknown one first: %+v", ws)
		}
		if _, err := s.UsageTotals(ctx, UsageFilter{}, "week"); err == nil || !strings.Contains(err.Error(), `"week"`) {
			t.Errorf("by week: %v", err)
		}
		// UsageByDay is the same sums.
		days, err := s.UsageByDay(ctx, time.Time{})
		byDay, _ := s.UsageTotals(ctx, UsageFilter{}, ByDay)
		if err != nil || len(days) != len(byDay) || len(days) < 5 {
			t.Fatalf("%+v %v", days, err)
		}
		for i, d := range days {
			if d.Day != byDay[i].Key || int64(d.InputTokens) != byDay[i].InputTokens || int64(d.OutputTokens) != byDay[i].OutputTokens {
				t.Errorf("day %d: %+v, %+v", i, d, byDay[i])
			}
		}
		// A session's own figures.
		for _, id := range ids {
			want := sumUsage(rows, workspaces, UsageFilter{SessionID: id}, ByTotal)[0]
			se, err := s.Get(ctx, id)
			if err != nil || int64(se.InputTokens) != want.InputTokens || int64(se.OutputTokens) != want.OutputTokens ||
				se.Cost == nil || *se.Cost != want.Cost || se.Unpriced != want.Unpriced {
				t.Errorf("session %s: %+v %v, want %+v", id, se, err, want)
			}
		}
	})
}

// TestSessionCost: a session's Cost is the sum of its priced calls, nil
// when none was priced; Unpriced counts the others. RecordUsage keeps a
// call's cost and cached input tokens (nil stays nil, 0 stays 0).
func TestSessionCost(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, tc := range []struct {
			id       string
			costs    []*int64
			cost     *int64
			unpriced int
		}{
			{"no-calls", nil, nil, 0},
			{"unpriced", []*int64{nil, nil}, nil, 2},
			{"free", []*int64{i64(0)}, i64(0), 0},
			{"mixed", []*int64{i64(1_500_000), nil, i64(3)}, i64(1_500_003), 1},
			{"priced", []*int64{i64(math.MaxInt64 / 2), i64(math.MaxInt64 / 2)}, i64(math.MaxInt64 - 1), 0},
		} {
			if err := s.Create(ctx, &Session{ID: tc.id}); err != nil {
				t.Fatal(err)
			}
			for i, c := range tc.costs {
				if err := s.RecordUsage(ctx, Usage{SessionID: tc.id, Model: "m", InputTokens: 100, CachedInputTokens: 40 + i, OutputTokens: 5, Cost: c}); err != nil {
					t.Fatal(err)
				}
			}
			se, err := s.Get(ctx, tc.id)
			if err != nil || !reflect.DeepEqual(se.Cost, tc.cost) || se.Unpriced != tc.unpriced || se.InputTokens != 100*len(tc.costs) {
				t.Errorf("%s: %+v %v", tc.id, se, err)
			}
			l, err := s.List(ctx, ListOptions{})
			found := false
			for _, x := range l {
				if x.ID == tc.id {
					found = true
					if !reflect.DeepEqual(x.Cost, tc.cost) || x.Unpriced != tc.unpriced {
						t.Errorf("%s listed: %+v", tc.id, x)
					}
				}
			}
			if err != nil || !found {
				t.Errorf("%s not listed: %v", tc.id, err)
			}
			tot, err := s.UsageTotals(ctx, UsageFilter{SessionID: tc.id}, ByTotal)
			want := UsageTotal{Calls: len(tc.costs), InputTokens: 100 * int64(len(tc.costs)), OutputTokens: 5 * int64(len(tc.costs)), Unpriced: tc.unpriced}
			for i := range tc.costs {
				want.CachedInputTokens += int64(40 + i)
			}
			if tc.cost != nil {
				want.Cost = *tc.cost
			}
			if err != nil || len(tot) != 1 || tot[0] != want {
				t.Errorf("%s: totals %+v %v, want %+v", tc.id, tot, err, want)
			}
		}
		// Sums beyond int64 fail; they are never wrong.
		if err := s.RecordUsage(ctx, Usage{SessionID: "free", Model: "m", Cost: i64(math.MaxInt64 / 2)}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordUsage(ctx, Usage{SessionID: "unpriced", Model: "m", Cost: i64(math.MaxInt64 / 2)}); err != nil {
			t.Fatal(err)
		}
		if tot, err := s.UsageTotals(ctx, UsageFilter{}, ByTotal); err == nil {
			t.Errorf("a sum beyond int64: %+v", tot)
		}
		if tot, err := s.UsageTotals(ctx, UsageFilter{}, BySession); err != nil || len(tot) != 4 {
			t.Errorf("by session, each in range: %+v %v", tot, err)
		}
	})
}
