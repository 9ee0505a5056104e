package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/termshot"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// modelGate makes the fake server answer each turn request of the model
// only when the test says so: between two replies the agent waits on the
// server, and the screen holds still at a known point (no clock involved).
// A title request (not streamed) is answered at once with title.
type modelGate struct {
	t    *testing.T
	next chan llmtest.Scenario
}

func newModelGate(t *testing.T, e *e2e, title string) *modelGate {
	g := &modelGate{t: t, next: make(chan llmtest.Scenario)}
	stop := make(chan struct{})
	// Registered after the server's Close and before the tmux servers'
	// kill: it runs between them, so that a request still waiting is let
	// go before the server waits for its handlers.
	t.Cleanup(func() { close(stop) })
	e.srv.Respond("/api/chat", func(r llmtest.Request) (llmtest.Scenario, bool) {
		if strings.Contains(string(r.Body), `"stream":false`) {
			return llmtest.OllamaWhole("m", llmtest.Text(title)), true
		}
		select {
		case sc := <-g.next:
			return sc, true
		case <-stop:
			return llmtest.Scenario{}, false
		}
	})
	return g
}

// reply answers the model request waiting (or the next one).
func (g *modelGate) reply(parts ...llmtest.Part) {
	g.t.Helper()
	select {
	case g.next <- llmtest.OllamaStream("m", parts...):
	case <-time.After(60 * time.Second):
		g.t.Fatal("the agent never asked the model for its next reply")
	}
}

// planCall is a call of the plan tool with these steps and states
// ("reason" after a colon for a skipped one).
func planCall(steps []string, states ...agent.PlanStatus) llmtest.Part {
	p := agent.Plan{}
	for i, st := range states {
		s := agent.PlanStep{Step: steps[i], Status: st}
		if st == agent.PlanSkipped {
			s.Step, s.Reason, _ = strings.Cut(steps[i], ":")
		}
		p.Steps = append(p.Steps, s)
	}
	b, _ := json.Marshal(p)
	return llmtest.Call(agent.PlanToolName, string(b))
}

// pinnedPlan is the plan pinned above the input box on the screen: its
// lines from the one starting " Plan " to the activity line or the box,
// trimmed (nil: no plan pinned).
func pinnedPlan(screen string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.HasPrefix(l, " Plan "):
			in = true
		case !in:
			continue
		case strings.HasPrefix(l, "╭"), !strings.HasPrefix(l, "   "):
			return out
		}
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

// waitPlan waits until the pinned plan is want, line for line (the title
// line up to its rule).
func (s *tmuxTUI) waitPlan(what string, want ...string) string {
	s.t.Helper()
	return s.waitFor(what+": "+strings.Join(want, " | "), func(sc string) bool {
		got := pinnedPlan(sc)
		if len(got) != len(want) {
			return false
		}
		for i := range want {
			if strings.TrimRight(strings.TrimRight(got[i], "─"), " ") != want[i] {
				return false
			}
		}
		return true
	})
}

var continueRE = regexp.MustCompile(`continue it with hearth --session (s-[a-z0-9]+)`)

// quit leaves with two Ctrl-C and returns the session's id from the
// farewell.
func (s *tmuxTUI) quit() string {
	s.t.Helper()
	s.keys("C-c")
	s.waitText("Press Ctrl-C again to quit")
	s.keys("C-c")
	sc := s.waitText("[hearth exited")
	m := continueRE.FindStringSubmatch(sc)
	if m == nil {
		s.t.Fatalf("no session on the way out:\n%s", sc)
	}
	return m[1]
}

// TestTUIPlan: a turn plans three steps and does them, one reply at a
// time; the checklist pinned above the input follows each change while
// the turn runs (pending → in progress → done), the plan tool's cards stay
// one quiet line each, the finished plan stays when the turn ends, comes
// back when the session is resumed in a new process, and goes at the next
// prompt.
func TestTUIPlan(t *testing.T) {
	e := newE2E(t)
	g := newModelGate(t, e, "Parser fix")
	steps := []string{"Read the parser", "Fix the off-by-one", "Run the tests"}
	P, I, D := agent.PlanPending, agent.PlanInProgress, agent.PlanDone
	s := startTUI(t, e, 100, 30)
	s.send("the parser drops the last token; fix it")

	g.reply(planCall(steps, P, P, P))
	sc := s.waitPlan("every step pending", " Plan 0/3", "   ○ Read the parser", "   ○ Fix the off-by-one", "   ○ Run the tests")
	if !strings.Contains(sc, "esc to stop") {
		t.Errorf("the turn is not running:\n%s", sc)
	}
	if !strings.Contains(sc, "✓ plan updated: 0/3 · next: Read the parser") || strings.Contains(sc, `"steps"`) || strings.Contains(sc, "update_plan") {
		t.Errorf("the plan tool's card is not one quiet line:\n%s", sc)
	}
	// Pinned: under the conversation, over the input box.
	row := func(sub string) int { return strings.Count(sc[:max(strings.Index(sc, sub), 0)], "\n") }
	if card, plan, box := row("plan updated"), row(" Plan 0/3"), row("╭"); !(card < plan && plan < box) {
		t.Errorf("the plan is not between the conversation and the input:\n%s", sc)
	}

	g.reply(planCall(steps, I, P, P))
	s.waitPlan("the first step in progress", " Plan 0/3", "   ▸ Read the parser", "   ○ Fix the off-by-one", "   ○ Run the tests")
	g.reply(planCall(steps, D, I, P))
	s.waitPlan("the first step done", " Plan 1/3", "   ✓ Read the parser", "   ▸ Fix the off-by-one", "   ○ Run the tests")
	g.reply(planCall(steps, D, D, I))
	s.waitPlan("the second step done", " Plan 2/3", "   ✓ Read the parser", "   ✓ Fix the off-by-one", "   ▸ Run the tests")
	g.reply(planCall(steps, D, D, D))
	finished := []string{" Plan 3/3 ✓ done", "   ✓ Read the parser", "   ✓ Fix the off-by-one", "   ✓ Run the tests"}
	s.waitPlan("every step done", finished...)
	g.reply(llmtest.Text("All three steps are done."))
	s.waitText("All three steps are done.")
	s.waitFor("the turn's end", func(sc string) bool { return !strings.Contains(sc, "esc to stop") })
	s.waitPlan("the finished plan after the turn", finished...)
	s.waitText("Parser fix") // the title: nothing is left to ask the model
	id := s.quit()

	// Resumed in a new process: the plan as the session left it.
	s = startTUI(t, e, 100, 30, "--session", id)
	s.waitText("Resumed session " + id)
	sc = s.waitPlan("the resumed plan", finished...)
	if n := strings.Count(sc, "plan updated:"); n < 3 {
		t.Errorf("the resumed cards (%d):\n%s", n, sc)
	}
	// The next prompt takes the finished plan down.
	s.send("thanks")
	g.reply(llmtest.Text("You are welcome."))
	s.waitText("You are welcome.")
	s.waitFor("the plan gone", func(sc string) bool { return pinnedPlan(sc) == nil })
	s.send("/plan")
	s.waitText(" 3. ✓ Run the tests")
}

// TestTUIPlanReminder: with strict_plan, a model that answers with a step
// open is sent back; the TUI says so as Hearth's note, not as a prompt of
// the user's, live and resumed, and /rewind does not offer it.
func TestTUIPlanReminder(t *testing.T) {
	e := newE2E(t)
	// The TUI's profile as built in, holding the model to its plan.
	os.WriteFile(filepath.Join(e.home, "config.toml"), []byte("[profiles.tui]\ntools = [\"*\"]\napproval_mode = \"default\"\nstrict_plan = true\n"), 0o644)
	g := newModelGate(t, e, "Tidy")
	steps := []string{"List the files", "Delete the backups", "Skip the logs:they are in use"}
	P, I, D, S := agent.PlanPending, agent.PlanInProgress, agent.PlanDone, agent.PlanSkipped
	s := startTUI(t, e, 100, 30)
	s.send("tidy the repo")
	g.reply(planCall(steps[:2], I, P))
	s.waitPlan("planned", " Plan 0/2", "   ▸ List the files", "   ○ Delete the backups")
	g.reply(planCall(steps[:2], D, I))
	s.waitPlan("one done", " Plan 1/2", "   ✓ List the files", "   ▸ Delete the backups")
	g.reply(llmtest.Text("Tidied, I think."))
	sc := s.waitText("Hearth sent the model back: 1 plan step open")
	if strings.Contains(sc, "Your plan still has") {
		t.Errorf("the reminder shows as a message:\n%s", sc)
	}
	g.reply(planCall([]string{steps[0], steps[1] + ":nothing to delete"}, D, S))
	s.waitPlan("finished", " Plan 2/2 ✓ done", "   ✓ List the files", "   ⊘ Delete the backups (skipped: nothing to delete)")
	g.reply(llmtest.Text("Nothing else to tidy."))
	s.waitText("Nothing else to tidy.")
	s.waitFor("the turn's end", func(sc string) bool { return !strings.Contains(sc, "esc to stop") })

	s.send("/rewind")
	sc = s.waitText("Rewind to before which message?")
	if !strings.Contains(sc, "› 1. tidy the repo") || strings.Contains(sc, "2. ") || strings.Contains(sc, "Your plan") {
		t.Errorf("/rewind offers:\n%s", sc)
	}
	s.keys("Escape")
	s.waitText("Cancelled: nothing was rewound.")
	id := s.quit()

	s = startTUI(t, e, 100, 30, "--session", id)
	sc = s.waitText("Resumed session " + id)
	if !strings.Contains(sc, "· Hearth sent the model back: 1 plan step open") || strings.Contains(sc, "Your plan still has") {
		t.Errorf("the resumed reminder:\n%s", sc)
	}
}

// TestTUIScreenshotsPlan writes docs/screenshots/plan.png (the pinned
// plan while a turn works through it) with the other screenshots:
//
//	HEARTH_SCREENSHOTS=$PWD/docs/screenshots go test -run TUIScreenshots ./cmd/hearth
func TestTUIScreenshotsPlan(t *testing.T) {
	dir := os.Getenv("HEARTH_SCREENSHOTS")
	if dir == "" {
		t.Skip("set HEARTH_SCREENSHOTS to a directory to write the terminal UI's screenshots")
	}
	const w, h = 100, 34
	e := newE2E(t)
	home := t.TempDir()
	e.ws = filepath.Join(home, "src", "calc")
	os.MkdirAll(e.ws, 0o755)
	os.WriteFile(filepath.Join(e.ws, "parser.go"), []byte("package calc\n\nfunc tokens(s []string) []string {\n\tvar out []string\n\tfor i := 0; i < len(s)-1; i++ {\n\t\tout = append(out, s[i])\n\t}\n\treturn out\n}\n"), 0o644)
	g := newModelGate(t, e, "Parser fix")
	steps := []string{"Read the parser", "Fix the off-by-one in the token loop", "Run the tests", "Note the fix in the changelog"}
	P, I, D := agent.PlanPending, agent.PlanInProgress, agent.PlanDone
	s := startTUIEnv(t, e, w, h, []string{"HOME=" + home}, "--approval-mode", "auto_edit")
	s.send("the parser drops the last token; fix it")
	g.reply(llmtest.Thinking("Four steps: read, fix, test, note it. "), planCall(steps, I, P, P, P))
	s.waitText("▸ Read the parser")
	g.reply(llmtest.Call("read_file", `{"file_path":"parser.go"}`))
	s.waitText("read_file parser.go")
	g.reply(planCall(steps, D, I, P, P))
	s.waitText("▸ Fix the off-by-one")
	g.reply(llmtest.Call("edit", `{"file_path":"parser.go","old_string":"i < len(s)-1","new_string":"i < len(s)"}`))
	s.waitText("i < len(s); i++")
	g.reply(planCall(steps, D, D, I, P))
	s.waitPlan("the plan to shoot", " Plan 2/4", "   ✓ Read the parser", "   ✓ Fix the off-by-one in the token loop", "   ▸ Run the tests", "   ○ Note the fix in the changelog")
	screen := s.tmux("capture-pane", "-e", "-p", "-t", "main")
	f, err := os.Create(filepath.Join(dir, "plan.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := termshot.WritePNG(f, screen, w, h, termshot.Options{}); err != nil {
		t.Fatal(err)
	}
	g.reply(llmtest.Text("Fixed."))
	s.waitText("Fixed.")
}
