package hearth_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// usageBot is an agent on a scripted Ollama server and a SQLite store, the
// model m priced at 1 per million tokens in and out: a call's cost in
// micro-units is its token count.
func usageBot(t *testing.T, srv *llmtest.Server, workspace string, edit func(*hearth.Config)) (*hearth.Agent, *session.SQLite) {
	t.Helper()
	store, err := session.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	c := hearth.Config{Provider: hearth.Ollama(srv.URL), Model: "m", Workspace: workspace, Store: store,
		Prices: map[string]hearth.Price{"m": {Input: "1", Output: "1"}}}
	if edit != nil {
		edit(&c)
	}
	bot, err := hearth.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Close() })
	return bot, store
}

func costString(c *int64) string {
	if c == nil {
		return "unknown"
	}
	return strconv.FormatInt(*c, 10)
}

func sessionUsage(t *testing.T, store session.Store, id string) session.UsageTotal {
	t.Helper()
	tot, err := store.UsageTotals(context.Background(), session.UsageFilter{SessionID: id}, session.ByTotal)
	if err != nil || len(tot) != 1 {
		t.Fatalf("usage of %s: %+v %v", id, tot, err)
	}
	return tot[0]
}

// A sub-agent's model calls are priced as its caller's, stored in its own
// session in the caller's workspace, and counted in the turn's cost: no
// "unknown" workspace appears.
func TestSubAgentCallsPricedInParentWorkspace(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.New(t)
	bot, store := usageBot(t, srv, t.TempDir(), func(c *hearth.Config) { c.Profile = hearth.Profile{Tools: []string{"*"}} })
	report := `{"summary":"nothing here","relevant_files":[],"open_questions":[]}`
	srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("call_inv", "codebase_investigator", `{"task":"look"}`), llmtest.Usage(1000, 10)),
		llmtest.OllamaStream("m", llmtest.Call("scratchpad", `{"explored":"nothing","still_needed":"x"}`), llmtest.Usage(1500, 15)),
		llmtest.OllamaStream("m", llmtest.Call("submit_report", report), llmtest.Usage(2000, 20)),
		llmtest.OllamaStream("m", llmtest.Text("done"), llmtest.Usage(3000, 30)),
	)
	res, err := bot.NewTurn(ctx, hearth.Request{Message: "q"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The turn's cost is all four calls': its own two and the child's.
	if res.Cost == nil || *res.Cost != 1010+1515+2020+3030 || res.Unpriced != 0 {
		t.Errorf("turn cost %s unpriced %d, want %d, 0", costString(res.Cost), res.Unpriced, 1010+1515+2020+3030)
	}
	if u := sessionUsage(t, store, res.SessionID); u.Calls != 2 || u.Cost != 4040 || u.Unpriced != 0 {
		t.Errorf("parent usage %+v", u)
	}
	kids, err := store.List(ctx, session.ListOptions{ParentID: res.SessionID})
	if err != nil || len(kids) != 1 {
		t.Fatalf("child sessions %+v %v", kids, err)
	}
	child := kids[0]
	if child.Workspace != bot.Workspace() {
		t.Errorf("child session's workspace %q, want the parent's %q", child.Workspace, bot.Workspace())
	}
	if u := sessionUsage(t, store, child.ID); u.Calls != 2 || u.Cost != 3535 || u.Unpriced != 0 {
		t.Errorf("child usage %+v", u)
	}
	byWS, err := store.UsageTotals(ctx, session.UsageFilter{}, session.ByWorkspace)
	if err != nil || len(byWS) != 1 || byWS[0].Key != bot.Workspace() || byWS[0].Calls != 4 {
		t.Errorf("usage by workspace %+v %v", byWS, err)
	}
	wss, err := store.Workspaces(ctx)
	if err != nil || len(wss) != 1 || wss[0].Path != bot.Workspace() {
		t.Errorf("workspaces %+v %v", wss, err)
	}
}

// The model calls outside a turn's replies are recorded, each once, with
// its model and cost, in the session they serve: a title, a /compress
// summary, an automatic summary inside a turn.
func TestSideCallsRecordedWithCost(t *testing.T) {
	long := strings.Repeat("a long question about many things ", 40)
	for _, tc := range []struct {
		name    string
		config  func(*hearth.Config)
		prompts []string
		replies []llmtest.Scenario
		after   func(ctx context.Context, bot *hearth.Agent, id string) error
		// the session's calls and cost, the last turn's cost
		calls          int
		cost, lastTurn int64
	}{
		{
			name:    "title",
			prompts: []string{"q1", "q2"},
			replies: []llmtest.Scenario{
				llmtest.OllamaStream("m", llmtest.Text("first answer"), llmtest.Usage(1000, 10)),
				llmtest.OllamaStream("m", llmtest.Text("second answer"), llmtest.Usage(1100, 10)),
				llmtest.OllamaStream("m", llmtest.Text("A title"), llmtest.Usage(5000, 5)),
			},
			after: func(ctx context.Context, bot *hearth.Agent, id string) error {
				title, err := bot.Session(id).Title(ctx, "")
				if err == nil && title != "A title" {
					t.Errorf("title %q", title)
				}
				return err
			},
			calls: 3, cost: 1010 + 1110 + 5005, lastTurn: 1110,
		},
		{
			name:    "compress",
			prompts: []string{"q1", "q2"},
			replies: []llmtest.Scenario{
				llmtest.OllamaStream("m", llmtest.Text("first answer"), llmtest.Usage(1000, 10)),
				llmtest.OllamaStream("m", llmtest.Text("second answer"), llmtest.Usage(1100, 10)),
				llmtest.OllamaStream("m", llmtest.Text("a summary of it all"), llmtest.Usage(7000, 50)),
			},
			after: func(ctx context.Context, bot *hearth.Agent, id string) error {
				return bot.Session(id).Compress(ctx, "", 0)
			},
			calls: 3, cost: 1010 + 1110 + 7050, lastTurn: 1110,
		},
		{
			name:    "automatic summary",
			config:  func(c *hearth.Config) { c.ContextLength = 400 },
			prompts: []string{long, "q2"},
			replies: []llmtest.Scenario{
				llmtest.OllamaStream("m", llmtest.Text("first answer"), llmtest.Usage(100, 10)),
				llmtest.OllamaStream("m", llmtest.Text("a summary of it all"), llmtest.Usage(7000, 50)),
				llmtest.OllamaStream("m", llmtest.Text("second answer"), llmtest.Usage(200, 10)),
			},
			// The summary is a call of the turn the user ran.
			calls: 3, cost: 110 + 7050 + 210, lastTurn: 7050 + 210,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			srv := llmtest.New(t)
			bot, store := usageBot(t, srv, "", tc.config)
			srv.Enqueue("/api/chat", tc.replies...)
			id := ""
			var last *hearth.Result
			for _, p := range tc.prompts {
				res, err := bot.NewTurn(ctx, hearth.Request{SessionID: id, Message: p}).Result()
				if err != nil {
					t.Fatal(err)
				}
				id, last = res.SessionID, res
			}
			if tc.after != nil {
				if err := tc.after(ctx, bot, id); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(srv.RequestsTo("/api/chat")); n != len(tc.replies) {
				t.Fatalf("%d model calls made, %d scripted", n, len(tc.replies))
			}
			if u := sessionUsage(t, store, id); u.Calls != tc.calls || u.Cost != tc.cost || u.Unpriced != 0 {
				t.Errorf("session usage: %d calls, cost %d, %d unpriced; want %d calls, cost %d", u.Calls, u.Cost, u.Unpriced, tc.calls, tc.cost)
			}
			byModel, err := store.UsageTotals(ctx, session.UsageFilter{}, session.ByModel)
			if err != nil || len(byModel) != 1 || byModel[0].Key != "m" {
				t.Errorf("usage by model %+v %v", byModel, err)
			}
			if last.Cost == nil || *last.Cost != tc.lastTurn || last.Unpriced != 0 {
				t.Errorf("last turn's cost %s unpriced %d, want %d", costString(last.Cost), last.Unpriced, tc.lastTurn)
			}
		})
	}
}

// The edit tool's fixer is a model call of the turn whose edit asked for
// it: recorded in its session, with its cost, and counted in the turn's.
func TestFixerCallRecorded(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.New(t)
	ws := t.TempDir()
	const file = "def load(path):\n    with open(path) as f:\n        data = json.load(f)\n    return data\n\n\ndef save(path, data):\n    with open(path, \"w\") as f:\n        json.dump(data, f, indent=2)\n"
	if err := os.WriteFile(filepath.Join(ws, "store.py"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	bot, store := usageBot(t, srv, ws, func(c *hearth.Config) {
		c.Profile = hearth.Profile{Tools: []string{"*"}, Mode: hearth.ModeYolo}
	})
	args := `{"file_path":"store.py","old_string":"def save(p, d):\n    with open(p, 'w') as fh:\n        json.dump(d, fh)\n","new_string":"def save(path, data):\n    with open(path, \"w\") as f:\n        json.dump(data, f, indent=4)\n"}`
	fix := "```python\ndef save(path, data):\n    with open(path, \"w\") as f:\n        json.dump(data, f, indent=2)\n```\n"
	srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", args), llmtest.Usage(1000, 10)),
		llmtest.OllamaStream("m", llmtest.Text(fix), llmtest.Usage(300, 40)), // the fixer
		llmtest.OllamaStream("m", llmtest.Text("edited"), llmtest.Usage(1200, 10)),
	)
	res, err := bot.NewTurn(ctx, hearth.Request{Message: "use indent 4"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(ws, "store.py"))
	if !strings.Contains(string(b), "indent=4") {
		t.Fatalf("the fixer's correction was not applied:\n%s", b)
	}
	if u := sessionUsage(t, store, res.SessionID); u.Calls != 3 || u.Cost != 1010+340+1210 || u.Unpriced != 0 {
		t.Errorf("session usage %+v, want 3 calls costing %d", u, 1010+340+1210)
	}
	if res.Cost == nil || *res.Cost != 1010+340+1210 || res.Unpriced != 0 {
		t.Errorf("turn cost %s unpriced %d", costString(res.Cost), res.Unpriced)
	}
}
