package conversation

import (
	"context"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

const planArgs = `{"steps":[{"step":"Read a","status":"done"},{"step":"Answer","status":"in_progress"}]}`

// TestPlanSurvivesResumeAndCompaction: the plan a session's model wrote
// is the run's plan when the session is resumed, even once a summary
// replaced the call that wrote it (the live history no longer holds it).
func TestPlanSurvivesResumeAndCompaction(t *testing.T) {
	f := newFixture(t)
	if err := f.a.Tools.Add(agent.NewPlanTool()); err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call(agent.PlanToolName, planArgs)),
		llmtest.OllamaStream("m", llmtest.Text("Half done.")))
	out, _, err := f.turn(t, "", "read a, then answer")
	if err != nil || out.Plan == nil || len(out.Plan.Steps) != 2 {
		t.Fatalf("%+v %v", out, err)
	}
	ctx := context.Background()
	// The first turn is summarised: its messages are compacted.
	msgs, _ := f.store.Messages(ctx, out.SessionID)
	var seqs []int
	for _, m := range msgs {
		seqs = append(seqs, m.Seq)
	}
	if _, err := f.store.Compact(ctx, out.SessionID, seqs, 0, session.Message{Message: llm.Message{Role: llm.RoleUser, Content: "Summary: read a"}}); err != nil {
		t.Fatal(err)
	}
	live, _ := f.store.LiveMessages(ctx, out.SessionID)
	if agent.PlanOf(session.History(live)) != nil {
		t.Fatal("the live history still holds the plan: the test proves nothing")
	}
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Done.")))
	out2, _, err := f.turn(t, out.SessionID, "go on")
	if err != nil || out2.Plan == nil || out2.Plan.Text() != "1. [done] Read a\n2. [in progress] Answer" {
		t.Fatalf("plan after resume: %+v %v", out2.Plan, err)
	}
}

// TestReminderStoredAsHearths: a strict plan's reminder is kept in the
// session as Hearth's message, and resuming sends it to the model again as
// it was sent.
func TestReminderStoredAsHearths(t *testing.T) {
	f := newFixture(t)
	if err := f.a.Tools.Add(agent.NewPlanTool()); err != nil {
		t.Fatal(err)
	}
	f.a.StrictPlan = true
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call(agent.PlanToolName, planArgs)),
		llmtest.OllamaStream("m", llmtest.Text("Early.")),
		llmtest.OllamaStream("m", llmtest.Text("Answered.")))
	out, _, err := f.turn(t, "", "read a, then answer")
	if err != nil || out.Text != "Answered." {
		t.Fatalf("%+v %v", out, err)
	}
	msgs, _ := f.store.Messages(context.Background(), out.SessionID)
	var reminders []session.Message
	for _, m := range msgs {
		if m.Role == llm.RoleUser && m.Reminder {
			reminders = append(reminders, m)
		}
	}
	if len(reminders) != 1 || !strings.HasPrefix(reminders[0].Content, "Your plan still has 1 open step(s)") || msgs[0].Reminder {
		t.Fatalf("stored: %+v", msgs)
	}
	if session.Unanswered(msgs) {
		t.Error("the session reads as unanswered")
	}
}

// TestCompressCarriesThePlan: a summary made on demand (/compress) tells
// the model its plan, as one made during a turn does.
func TestCompressCarriesThePlan(t *testing.T) {
	f := newFixture(t)
	if err := f.a.Tools.Add(agent.NewPlanTool()); err != nil {
		t.Fatal(err)
	}
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call(agent.PlanToolName, planArgs)),
		llmtest.OllamaStream("m", llmtest.Text("Half done.")),
		llmtest.OllamaStream("m", llmtest.Text("Still on it.")),
		llmtest.OllamaStream("m", llmtest.Text("- read a")))
	out, _, err := f.turn(t, "", "read a, then answer")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.turn(t, out.SessionID, "go on"); err != nil {
		t.Fatal(err)
	}
	if err := Compress(context.Background(), f.store, f.a, out.SessionID, 1, nil); err != nil {
		t.Fatal(err)
	}
	msgs, _ := f.store.Messages(context.Background(), out.SessionID)
	var summary string
	for _, m := range msgs {
		if m.Summary {
			summary = m.Content
		}
	}
	if !strings.Contains(summary, "- read a") || !strings.Contains(summary, "1. [done] Read a\n2. [in progress] Answer") {
		t.Fatalf("summary:\n%s", summary)
	}
}

// TestRetryAfterReminder: a turn whose model call after a reminder failed
// is run again from the reminder, and its checkpoints belong to the
// user's prompt, not to Hearth's reminder.
func TestRetryAfterReminder(t *testing.T) {
	f := newFixture(t)
	if err := f.a.Tools.Add(agent.NewPlanTool()); err != nil {
		t.Fatal(err)
	}
	f.a.StrictPlan = true
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call(agent.PlanToolName, planArgs)),
		llmtest.OllamaStream("m", llmtest.Text("Early.")),
		llmtest.OllamaError(500, "model runner crashed"))
	f.a.Provider = ollama.New(ollama.Options{BaseURL: f.srv.URL, NumCtx: 8192, MaxRetries: -1})
	out, _, err := f.turn(t, "", "read a, then answer")
	if err != nil || out.Reason != agent.DoneError {
		t.Fatalf("%+v %v", out, err)
	}
	msgs, _ := f.store.Messages(context.Background(), out.SessionID)
	if !session.Unanswered(msgs) {
		t.Fatal("the session does not read as unanswered")
	}
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Answered.")))
	tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: out.SessionID}, Retry: true}
	out2, err := tr.Run(context.Background(), func(agent.Event) {})
	if err != nil || out2.Text != "Answered." {
		t.Fatalf("%+v %v", out2, err)
	}
	reqs := f.srv.RequestsTo("/api/chat")
	var body struct {
		Messages []llm.Message `json:"messages"`
	}
	reqs[len(reqs)-1].JSON(t, &body)
	if last := body.Messages[len(body.Messages)-1]; !strings.HasPrefix(last.Content, "Your plan still has") {
		t.Errorf("the retry did not continue from the reminder: %+v", last)
	}
}
