// Package conversation runs one turn of a stored conversation: it joins an
// agent (package agent) to a session store (package session) so that every
// mode — headless, terminal UI, HTTP API — keeps sessions the same way.
//
// The guarantees: the user's message is committed before the model is
// called; each reply and tool result is committed as soon as it is made, a
// partial reply included when the turn fails or is cancelled; a turn that
// fails leaves a record of why (session.FailureMessage), which the session
// shows and no model is sent; a new session is titled from its prompt at
// once (Title asks the model for a better one, apart from the turn); usage
// and every tool run are recorded; two turns on one session never interleave (the second waits
// briefly, then fails with session.ErrBusy).
//
// Every model call is recorded, with its model and cost (nil: the model has
// no price), in the session it serves: a turn's replies, the summaries of
// its automatic compaction, the calls its tools make (the edit fixer,
// through RecordUsage), a sub-agent's calls in the sub-agent's own
// session, a title's (Title) and a /compress summary's (Compress).
//
// A turn of a session that has a workspace marks the workspace used
// (session.Store.TouchWorkspace), so that its last use is its last turn's:
// about its sessions' last update, what a store migrated from before
// workspaces were kept gives it.
package conversation

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/checkpoint"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// Turn is one user turn in a session.
type Turn struct {
	Store session.Store
	Agent *agent.Agent
	// Options are the run's: approver, live mode, approvals, hooks and a
	// model for this turn. The turn adds its own OnMessage, OnCompact and
	// hooks to keep what happens, after the caller's.
	Options agent.RunOptions
	// Session says which session: its ID (a new one is created when the
	// store does not have it, or when ID is empty) and, for a new session,
	// the provider, model and workspace to record.
	Session session.Session
	// Prompt is the user's message.
	Prompt llm.Message
	// Retry, instead of a new Prompt, runs the session again from its last
	// message, the user's, that no reply answered (a turn that failed or
	// was stopped before the model answered); the session must have one
	// (else ErrNothingToRetry).
	Retry bool
	// Context, when set, is shown to the model with this turn only (the
	// current view, a selection): the stored history does not keep it.
	Context string
	Log     *slog.Logger
	// Checkpoints, if set, snapshots the workspace before each call of a
	// tool that may change it (any but a read-only one), and after a turn
	// that made such calls, recording each with the session, the turn and
	// the call (an EventCheckpoint says so). A call whose checkpoint
	// cannot be made is refused: what it would change could not be
	// undone.
	Checkpoints *checkpoint.Keeper
	// Prices are the models' rates, by model name (see internal/pricing):
	// each model call's usage is recorded with its cost, and its usage
	// event carries it. A model without one has no cost (unknown, never
	// 0).
	Prices map[string]pricing.Rates

	// parent is the meter of the turn whose sub-agent runs this one
	// (SubAgentRunner): this turn's calls count in its Outcome too.
	parent *meter
}

// ErrNothingToRetry is returned by a Retry of a session whose last message
// is not an unanswered one of the user's (or of a session that does not
// exist).
var ErrNothingToRetry = errors.New("no unanswered message to retry")

// Outcome is what a turn produced.
type Outcome struct {
	// SessionID is the session the turn went to (new or existing).
	SessionID string
	// Created is set when the turn created the session.
	Created bool
	*agent.Result
	// ToolCalls lists the calls made, in order.
	ToolCalls []llm.ToolCall
	// Cost sums the cost of the turn's priced model calls, in
	// micro-units (nil: none was priced); Unpriced counts its calls
	// without a price (when above 0, the cost is incomplete, or unknown).
	// The turn's calls are all those the user's turn caused: its replies,
	// its automatic summaries, its tools' (the edit fixer) and its
	// sub-agents' (stored in their own sessions). A sum that would
	// overflow is unknown: Cost nil, every call counted in Unpriced.
	Cost     *int64
	Unpriced int
}

// Run performs the turn, emitting the agent's events (first an
// EventSession). The error is for failures outside the agent's turn (the
// store, the lock); a turn that failed is reported in Outcome.Reason/Err.
func (t *Turn) Run(ctx context.Context, emit func(agent.Event)) (*Outcome, error) {
	log := t.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Store writes must happen even when ctx is cancelled (Ctrl-C): the
	// partial reply is kept.
	wctx := context.WithoutCancel(ctx)
	st := t.Store
	out := &Outcome{SessionID: t.Session.ID}

	if out.SessionID == "" {
		out.SessionID = session.NewID()
	}
	unlock, err := st.Lock(ctx, out.SessionID)
	if err != nil {
		return nil, err
	}
	defer unlock()

	sess, err := st.Get(ctx, out.SessionID)
	switch {
	case errors.Is(err, session.ErrNotFound) && t.Retry:
		return nil, fmt.Errorf("%w: %w", ErrNothingToRetry, err)
	case errors.Is(err, session.ErrNotFound):
		s := t.Session
		s.ID = out.SessionID
		if s.Title == "" {
			// Titled from the prompt at once: a better title from the
			// model (Title) is never on the path to the answer.
			s.Title = ProvisionalTitle(t.Prompt.Content)
		}
		if err := st.Create(wctx, &s); err != nil {
			return nil, err
		}
		sess, out.Created = &s, true
	case err != nil:
		return nil, err
	}
	if !out.Created && sess.Workspace != "" {
		// The workspace is used now (Create marked a new session's).
		if _, err := st.TouchWorkspace(wctx, sess.Workspace); err != nil {
			log.Warn("marking the workspace used", "session", out.SessionID, "workspace", sess.Workspace, "error", err)
		}
	}
	stored, err := st.LiveMessages(ctx, out.SessionID)
	if err != nil {
		return nil, err
	}
	history := session.History(stored)
	// seqs[i] is the stored seq of history[i] (0 for a message added by
	// History that is not stored).
	seqs := seqsOf(stored, history)

	prompt := t.Prompt
	prompt.Role = llm.RoleUser
	if t.Retry {
		// The history ends with the message to answer, already stored.
		if !session.Unanswered(stored) || len(history) == 0 {
			return nil, fmt.Errorf("session %s: %w", out.SessionID, ErrNothingToRetry)
		}
		prompt = history[len(history)-1]
		log.Debug("retrying", "session", out.SessionID, "seq", seqs[len(seqs)-1])
	} else {
		saved, err := st.Append(wctx, out.SessionID, session.Message{Message: prompt})
		if err != nil {
			return nil, fmt.Errorf("saving your message: %w", err)
		}
		log.Debug("message committed", "session", out.SessionID, "seq", saved[0].Seq, "role", "user")
		history = append(history, prompt)
		seqs = append(seqs, saved[0].Seq)
		if sess.Title == "" {
			// A session made without a title (the HTTP API's POST
			// /v1/sessions) takes its first prompt's.
			sess.Title = ProvisionalTitle(prompt.Content)
			if err := st.Rename(wctx, out.SessionID, sess.Title); err != nil {
				log.Warn("titling the session", "session", out.SessionID, "error", err)
			}
		}
	}
	if t.Context != "" {
		// Shown to the model with this turn only, never stored: after the
		// prompt's own text, so that the next turn, which sends the prompt
		// without it, still begins with the same bytes up to there (a
		// server's prompt cache keeps that much).
		withCtx := prompt
		withCtx.Content = prompt.Content + "\n\nContext for this request (not part of the conversation):\n" + t.Context
		history[len(history)-1] = withCtx
	}

	model := t.Agent.Model
	if t.Options.Model != "" {
		model = t.Options.Model
	}
	emit(agent.Event{Type: agent.EventSession, SessionID: out.SessionID, Provider: providerKind(t.Agent), Model: model})

	a := t.Agent
	o := t.Options // the hooks below belong to this turn
	if o.Plan == nil {
		if o.Plan, err = planOf(ctx, st, out.SessionID, stored); err != nil {
			return nil, err
		}
	}
	// Sub-agents run by this turn link their sessions to this one.
	o.SessionID = out.SessionID
	var mu sync.Mutex
	var storeErr error
	keep := func(err error) {
		if err != nil {
			mu.Lock()
			if storeErr == nil {
				storeErr = err
			}
			mu.Unlock()
			log.Error("saving the session", "session", out.SessionID, "error", err)
		}
	}
	m := &meter{st: st, id: out.SessionID, prices: t.Prices, log: log, keep: keep, parent: t.parent}
	// The turn's tools (the edit fixer) and sub-agents find its meter.
	ctx = withMeter(ctx, m)
	o.OnUsage = func(model string, u llm.Usage) {
		if prev := t.Options.OnUsage; prev != nil {
			prev(model, u)
		}
		_, _ = m.record(wctx, model, u) // a store error: kept
	}
	// The provider's count of a reply's tokens, when it gave one, comes
	// with the usage event just before the reply is handed over.
	lastOutput := 0
	o.OnMessage = func(m llm.Message, partial bool) {
		if prev := t.Options.OnMessage; prev != nil {
			prev(m, partial)
		}
		// The agent adds a user message only when it writes to the model
		// on its own (a reminder of the plan's open steps).
		sm := session.Message{Message: m, Partial: partial, Reminder: m.Role == llm.RoleUser}
		if m.Role == llm.RoleAssistant && lastOutput > 0 {
			sm.Tokens, lastOutput = lastOutput, 0
		}
		saved, err := st.Append(wctx, out.SessionID, sm)
		keep(err)
		if err == nil {
			seqs = append(seqs, saved[0].Seq)
			log.Debug("message committed", "session", out.SessionID, "seq", saved[0].Seq, "role", string(m.Role))
		}
		if m.Role == llm.RoleAssistant {
			out.ToolCalls = append(out.ToolCalls, m.ToolCalls...)
		}
	}
	o.OnCompact = func(cut int, summary llm.Message) {
		if prev := t.Options.OnCompact; prev != nil {
			prev(cut, summary)
		}
		// Exactly the stored messages that were cut become compacted; the
		// summary takes their place, before the first message kept.
		cutSeqs, before := compaction(seqs, cut)
		saved, err := st.Compact(wctx, out.SessionID, cutSeqs, before, session.Message{Message: summary})
		keep(err)
		seqs = append([]int{saved.Seq}, seqs[cut:]...)
	}
	started := map[string]time.Time{}
	before, after := o.Hooks.Before, o.Hooks.After
	turnSeq := 0 // the seq of the turn's user message
	if len(seqs) > 0 {
		turnSeq = seqs[len(seqs)-1]
	}
	if t.Retry {
		// The message run again may be a reminder Hearth wrote: the
		// turn is the user's prompt before it.
		for i := len(stored) - 1; i >= 0; i-- {
			if m := stored[i]; m.Role == llm.RoleUser && !m.Reminder && !m.Summary {
				turnSeq = m.Seq
				break
			}
		}
	}
	checkpointed := false
	// Since the last checkpoint of the turn (lastTree), only the files the
	// calls since named may have changed, when those calls were the
	// built-in edit tools' (edited; nil: anything may have).
	var lastTree string
	var edited []string
	take := func(ctx context.Context, rec session.Checkpoint, force []string) (session.Checkpoint, checkpoint.Snapshot, error) {
		o := checkpoint.TakeOptions{Force: force}
		if lastTree != "" && edited != nil {
			o.Base, o.Changed = lastTree, edited
		}
		saved, snap, err := t.Checkpoints.Take(ctx, rec, o)
		if err == nil {
			lastTree, edited = saved.Tree, []string{}
		}
		return saved, snap, err
	}
	o.Hooks.Before = func(ctx context.Context, c tool.Call, name string) error {
		if before != nil {
			if err := before(ctx, c, name); err != nil {
				return err
			}
		}
		if t.Checkpoints != nil && changesFiles(a, name) {
			rec := session.Checkpoint{SessionID: out.SessionID, Kind: session.CheckpointBefore, Turn: turnSeq, Seq: lastSeq(seqs), CallID: c.ID, Tool: name}
			saved, snap, err := take(ctx, rec, checkpoint.PathsIn(c.Args, t.Checkpoints.Store().Root(), editsFiles(a, name)))
			if err != nil {
				log.Error("checkpoint before a call", "session", out.SessionID, "call", c.ID, "error", err)
				return fmt.Errorf("could not checkpoint the workspace before this call, so what it changes could not be undone: %w. The user can free disk space, or turn checkpoints off", err)
			}
			checkpointed = true
			emit(checkpointEvent(saved, snap))
		}
		mu.Lock()
		started[c.ID] = time.Now()
		mu.Unlock()
		return nil
	}
	o.Hooks.After = func(ctx context.Context, c tool.Call, name string, res tool.Result, err error) {
		if t.Checkpoints != nil && changesFiles(a, name) {
			if builtinEdit(name) && edited != nil {
				edited = append(edited, checkpoint.PathsIn(c.Args, t.Checkpoints.Store().Root(), true)...)
			} else {
				edited = nil // a command, or another tool: anything may have changed
			}
		}
		mu.Lock()
		d := time.Since(started[c.ID])
		mu.Unlock()
		run := session.ToolRun{SessionID: out.SessionID, CallID: c.ID, Name: name, Args: c.Args, OK: err == nil, Output: res.Output, Duration: d}
		if err != nil {
			run.Error = err.Error()
		}
		keep(st.RecordToolRun(wctx, run))
		if after != nil {
			after(ctx, c, name, res, err)
		}
	}
	res := a.RunWith(ctx, history, o, func(ev agent.Event) {
		if ev.Type == agent.EventUsage {
			lastOutput = ev.OutputTokens
			ev.Cost, _ = m.record(wctx, model, llm.Usage{InputTokens: ev.InputTokens, OutputTokens: ev.OutputTokens,
				CachedInputTokens: ev.CachedInputTokens}) // a store error: kept
		}
		emit(ev)
	})
	out.Result = res
	out.Cost, out.Unpriced = m.totals()
	if checkpointed {
		// The state the turn left the files in: what undo compares with
		// (a change after it is the user's).
		rec := session.Checkpoint{SessionID: out.SessionID, Kind: session.CheckpointAfter, Turn: turnSeq, Seq: lastSeq(seqs)}
		if _, _, err := take(wctx, rec, nil); err != nil {
			log.Error("checkpoint after the turn", "session", out.SessionID, "error", err)
		}
	}
	if res.Reason == agent.DoneError && res.Err != nil {
		// Why the turn failed stays with the session: shown where it is
		// read, never sent to a model.
		_, err := st.Append(wctx, out.SessionID, session.FailureMessage(res.Err))
		keep(err)
	}

	if storeErr != nil {
		return out, fmt.Errorf("saving the session: %w", storeErr)
	}
	return out, nil
}

// planOf is the session's plan: that of its live messages, or, when a
// summary replaced some, of all its messages (the plan's last call may be
// among those the summary replaced).
func planOf(ctx context.Context, st session.Store, id string, live []session.Message) (*agent.Plan, error) {
	all := live
	for _, m := range live {
		if m.Summary {
			var err error
			if all, err = st.Messages(ctx, id); err != nil {
				return nil, fmt.Errorf("reading the session's plan: %w", err)
			}
			break
		}
	}
	return Plan(all), nil
}

// Plan returns the plan that a session's stored messages hold at their end
// (nil: none). Give it every message, compacted ones included.
func Plan(msgs []session.Message) *agent.Plan {
	lm := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		if !m.Failure {
			lm = append(lm, m.Message)
		}
	}
	return agent.PlanOf(lm)
}

// lastSeq is the seq of the last message committed.
func lastSeq(seqs []int) int {
	for i := len(seqs) - 1; i >= 0; i-- {
		if seqs[i] > 0 {
			return seqs[i]
		}
	}
	return 0
}

// changesFiles reports whether a call of the tool may change the
// workspace: any tool but a read-only one (an MCP server's and a host
// tool's too: what they do is theirs to say).
func changesFiles(a *agent.Agent, name string) bool {
	if a.Tools == nil {
		return false
	}
	tl, ok := a.Tools.Get(name)
	return ok && tl.Kind() != tool.ReadOnly
}

// builtinEdit reports whether name is a built-in edit tool's: a call of
// one changes the files its arguments name and nothing else, so the
// checkpoint after it looks at those alone.
func builtinEdit(name string) bool { return name == "edit" || name == "write_file" }

// editsFiles reports whether the tool is an edit tool, whose path
// arguments name the files it changes.
func editsFiles(a *agent.Agent, name string) bool {
	if a.Tools == nil {
		return false
	}
	tl, ok := a.Tools.Get(name)
	return ok && tl.Kind() == tool.Edit
}

// checkpointEvent tells the stream a checkpoint was taken.
func checkpointEvent(c session.Checkpoint, snap checkpoint.Snapshot) agent.Event {
	return agent.Event{Type: agent.EventCheckpoint, ID: c.CallID, Name: c.Tool, Checkpoint: &agent.CheckpointInfo{
		ID: c.ID, Seq: c.Seq, Files: snap.Files, Stored: snap.Stored, TooLarge: snap.TooLarge}}
}

func providerKind(a *agent.Agent) string {
	if a.Provider == nil {
		return ""
	}
	return a.Provider.Kind()
}

// seqsOf maps each history message to its stored seq: History keeps stored
// messages in order, skipping compacted ones and adding answers to
// interrupted calls (which are not stored).
func seqsOf(stored []session.Message, history []llm.Message) []int {
	stored = session.InOrder(stored)
	seqs := make([]int, 0, len(history))
	j := 0
	for _, h := range history {
		for j < len(stored) && (stored[j].Compacted || stored[j].Failure) {
			j++
		}
		if j < len(stored) && stored[j].Role == h.Role && stored[j].Content == h.Content && stored[j].ToolCallID == h.ToolCallID {
			seqs = append(seqs, stored[j].Seq)
			j++
		} else {
			seqs = append(seqs, 0)
		}
	}
	return seqs
}

// cleanTitle keeps the first line, without quotes or a trailing period.
func cleanTitle(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.Trim(s, " \"'`*#.")
	s = strings.TrimPrefix(s, "Title: ")
	if len([]rune(s)) > 80 {
		s = string([]rune(s)[:80])
	}
	return strings.TrimSpace(s)
}

// ProvisionalTitle is the title a session gets from its first prompt: the
// start of its first line. It stands until the model gives a better one
// (Title).
func ProvisionalTitle(prompt string) string {
	line := strings.TrimSpace(prompt)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimFunc(line, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if r := []rune(line); len(r) > 60 {
		line = strings.TrimSpace(string(r[:60])) + "…"
	}
	if line == "" {
		return "Untitled"
	}
	return line
}

// compaction says which stored messages a compression that cut the first
// cut messages of the history replaces, and the seq of the first stored
// message kept, before which the summary goes (0: none is kept). seqs holds
// each history message's seq, 0 for one not stored.
func compaction(seqs []int, cut int) (cutSeqs []int, before int) {
	for _, q := range seqs[:cut] {
		if q > 0 {
			cutSeqs = append(cutSeqs, q)
		}
	}
	for _, q := range seqs[cut:] {
		if q > 0 {
			return cutSeqs, q
		}
	}
	return cutSeqs, 0
}

// Compress summarises the older part of a stored session now (a /compress
// command), keeping about keep tokens of recent messages. It takes the
// session lock like a turn. The summary's model call is recorded in the
// session, with its cost at prices.
func Compress(ctx context.Context, st session.Store, a *agent.Agent, id string, keep int, prices map[string]pricing.Rates) error {
	unlock, err := st.Lock(ctx, id)
	if err != nil {
		return err
	}
	defer unlock()
	stored, err := st.LiveMessages(ctx, id)
	if err != nil {
		return err
	}
	history := session.History(stored)
	seqs := seqsOf(stored, history)
	m := &meter{st: st, id: id, prices: prices}
	var recErr error
	summary, cut, err := a.CompressWith(ctx, history, keep, agent.CompressOptions{OnUsage: func(u llm.Usage) {
		if _, err := m.record(ctx, a.Model, u); err != nil {
			recErr = fmt.Errorf("recording the summary's usage: %w", err)
		}
	}})
	if err != nil {
		return errors.Join(err, recErr)
	}
	plan, err := planOf(ctx, st, id, stored)
	if err != nil {
		return err
	}
	summary = agent.WithPlan(summary, plan)
	cutSeqs, before := compaction(seqs, cut)
	_, err = st.Compact(context.WithoutCancel(ctx), id, cutSeqs, before, session.Message{Message: summary})
	return errors.Join(err, recErr)
}
