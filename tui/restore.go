package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// Taking back what the agent did: /undo, /redo and /rewind.
//
// Each goes through hearth.Session.Restore twice: first as a dry run, whose
// result is the preview shown in a panel in the input's place (the files
// and what happens to each, what cannot be restored, the files changed
// after the agent changed them), then, once the user confirms, for real,
// with the conflicts resolved as the user chose (overwrite their changes,
// keep them, or cancel). Both run on a worker goroutine as a job of their
// own (jobRestore): the store and the files are never touched in Update.
//
// /rewind first asks which message to go back to (the session's prompts,
// newest first) and what to rewind (files and conversation, files only,
// conversation only). Rewinding to before a prompt is a rewind through the
// message before it; the prompt's text goes back into the input box. The
// first prompt has no message before it, and Restore rewinds the
// conversation only to a message: its files go back to the session's
// first checkpoint (the state before the agent changed anything), and its
// conversation is emptied by archiving the session (kept whole, hidden
// from the list, as Restore keeps a rewound conversation) and starting a
// new one with the next message.

// restoreStage is where a restore is.
type restoreStage uint8

const (
	// stagePick: /rewind, choosing the message.
	stagePick restoreStage = iota
	// stageScope: /rewind, choosing files, conversation or both.
	stageScope
	// stageWork: the preview or the restore runs.
	stageWork
	// stagePreview: the preview, waiting for the user's answer.
	stagePreview
)

// rewindScope is what a /rewind takes back.
type rewindScope uint8

const (
	scopeBoth rewindScope = iota
	scopeFiles
	scopeConversation
)

// rewindScopes are offered in this order (the first is the default).
var rewindScopes = []struct {
	scope rewindScope
	label string
}{
	{scopeBoth, "Files and conversation"},
	{scopeFiles, "Files only (the conversation stays)"},
	{scopeConversation, "Conversation only (the files stay as they are)"},
}

// conflictChoices are offered when files changed after the agent changed
// them (the default is the second: nothing of the user's is touched).
var conflictChoices = []string{
	"Overwrite my changes (my version is kept in a checkpoint)",
	"Keep my changes (restore the other files only)",
	"Cancel",
}

// rewindPoint is a prompt a /rewind can go back to before.
type rewindPoint struct {
	seq int // the prompt's seq
	// through is the seq of the message before it (0: it is the
	// session's first).
	through int
	n       int    // its number among the session's prompts (1: the first)
	text    string // what the user typed (it goes back into the input)
}

// label is the prompt's first line, for the list and the result.
func (p rewindPoint) label() string { return firstLine(p.text) }

// restoreState is a /undo, /redo or /rewind under way: its panel takes
// the input's place until it is done or cancelled.
type restoreState struct {
	op    hearth.RestoreOp
	stage restoreStage
	// sessionID is the session restored.
	sessionID string
	// points are the prompts to rewind to, newest first; point is the one
	// chosen; scope what to rewind.
	points []rewindPoint
	point  *rewindPoint
	scope  rewindScope
	// sel is the selection in the list shown (points, scopes or
	// conflictChoices).
	sel int
	// spec is the restore the preview is of.
	spec restoreSpec
	// preview is the dry run's result; turn names the turn undone or
	// redone.
	preview *hearth.RestoreResult
	turn    turnLabel
	// note is said above the preview (the files changed since the last
	// one).
	note string
	// applying: the restore itself runs (it cannot be stopped half-way).
	applying bool
}

// turnLabel names a turn for people: its number among the session's
// prompts and its prompt's first line.
type turnLabel struct {
	n    int
	text string
}

func (t turnLabel) String() string {
	switch {
	case t.n == 0:
		return "the last turn that changed files"
	case t.text == "":
		return fmt.Sprintf("turn %d", t.n)
	}
	return fmt.Sprintf("turn %d “%s”", t.n, clean(t.text))
}

// restoreSpec is a restore to preview or make, copied out of the model so
// that the worker shares nothing with it.
type restoreSpec struct {
	agent     *hearth.Agent
	sessionID string
	// req is the Restore to make.
	req hearth.RestoreRequest
	// reload: the conversation changes; the restore's result brings the
	// session as it is then.
	reload bool
}

// Messages of the restores.
type (
	// rewindPointsMsg brings the prompts /rewind offers.
	rewindPointsMsg struct {
		sessionID string
		points    []rewindPoint
		err       error
	}
	// restoreDoneMsg says a restore's preview (dry) or the restore itself
	// ended.
	restoreDoneMsg struct {
		spec restoreSpec
		dry  bool
		res  *hearth.RestoreResult
		err  error
		turn turnLabel
		// loaded is the session after a restore that changed its
		// conversation (nil otherwise, or when it could not be read).
		loaded *sessionLoadedMsg
	}
)

// restoreCommand starts /undo, /redo or /rewind (the command checked that
// no work runs).
func (m *Model) restoreCommand(op hearth.RestoreOp) tea.Cmd {
	id := m.sessionID
	if id == "" {
		m.notice(noticeInfo, fmt.Sprintf("Nothing to %s yet: the session starts with your first message.", op), nil)
		return nil
	}
	switch op {
	case hearth.Rewind:
		return rewindPointsCmd(m.agent.Store(), id)
	default:
		m.restore = &restoreState{op: op, sessionID: id}
		return m.startPreview(restoreSpec{agent: m.agent, sessionID: id, req: hearth.RestoreRequest{Op: op}})
	}
}

// rewindPointsCmd reads the session's prompts, newest first.
func rewindPointsCmd(st session.Store, id string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		msgs, err := st.Messages(ctx, id)
		if err != nil {
			return rewindPointsMsg{sessionID: id, err: err}
		}
		return rewindPointsMsg{sessionID: id, points: rewindPoints(msgs)}
	}
}

// rewindPoints are the prompts of msgs (in seq order), newest first.
func rewindPoints(msgs []session.Message) []rewindPoint {
	var out []rewindPoint
	prev, n := 0, 0
	for _, sm := range msgs {
		if sm.Role == llm.RoleUser && !sm.Summary && !sm.Reminder {
			n++
			out = append(out, rewindPoint{seq: sm.Seq, through: prev, n: n, text: typedText(sm.Content)})
		}
		prev = sm.Seq
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// rewindPointsLoaded puts up the list of prompts.
func (m *Model) rewindPointsLoaded(msg rewindPointsMsg) tea.Cmd {
	if msg.sessionID != m.sessionID || m.job != jobNone || m.approval != nil || m.restore != nil {
		return nil // the user moved on meanwhile
	}
	switch {
	case msg.err != nil:
		m.notice(noticeError, "Could not read the session's messages: "+msg.err.Error(), nil)
	case len(msg.points) == 0:
		m.notice(noticeInfo, "Nothing to rewind: the session has no messages yet.", nil)
	default:
		m.restore = &restoreState{op: hearth.Rewind, sessionID: msg.sessionID, points: msg.points}
		m.scroll = 0
	}
	return nil
}

// rewindSpec is the restore a /rewind to before point p, of scope, makes.
func (m *Model) rewindSpec(p rewindPoint, scope rewindScope) restoreSpec {
	spec := restoreSpec{agent: m.agent, sessionID: m.restore.sessionID, reload: scope != scopeFiles}
	if p.through > 0 {
		spec.req = hearth.RestoreRequest{Op: hearth.Rewind, Through: p.through,
			FilesOnly: scope == scopeFiles, ConversationOnly: scope == scopeConversation}
		return spec
	}
	// Before the first prompt: the start of the session (no message
	// left, the files as before it changed any).
	spec.req = hearth.RestoreRequest{Op: hearth.Rewind, Start: true,
		FilesOnly: scope == scopeFiles, ConversationOnly: scope == scopeConversation}
	return spec
}

// startPreview runs the dry run of spec.
func (m *Model) startPreview(spec restoreSpec) tea.Cmd {
	r := m.restore
	r.stage, r.spec, r.applying = stageWork, spec, false
	ctx, cancel := context.WithCancel(context.Background())
	m.beginJob(jobRestore, cancel, fmt.Sprintf("Working out what /%s would change…", r.op))
	b := m.bridge
	m.jobs.start(func() { b.send(runRestore(ctx, spec, true)) })
	return m.startTick()
}

// apply makes the restore previewed, with the conflicts resolved: overwrite
// them, or keep them (the user's files stay as they are).
func (m *Model) apply(overwrite bool) tea.Cmd {
	r := m.restore
	spec := r.spec
	if r.preview != nil && len(r.preview.Conflicts) > 0 {
		if overwrite {
			spec.req.Overwrite = true
		} else {
			spec.req.Keep = append([]string(nil), r.preview.Conflicts...)
		}
	}
	r.stage, r.applying = stageWork, true
	// A restore is not stopped half-way: it has no cancel (esc says so).
	m.beginJob(jobRestore, nil, restoringLabel(r.op))
	b := m.bridge
	m.jobs.start(func() { b.send(runRestore(context.Background(), spec, false)) })
	return m.startTick()
}

func restoringLabel(op hearth.RestoreOp) string {
	switch op {
	case hearth.Undo:
		return "Undoing…"
	case hearth.Redo:
		return "Redoing…"
	}
	return "Rewinding…"
}

// runRestore is a restore's work, on a worker goroutine: the preview (dry)
// or the restore, then what the result shows.
func runRestore(ctx context.Context, spec restoreSpec, dry bool) restoreDoneMsg {
	out := restoreDoneMsg{spec: spec, dry: dry}
	sess := spec.agent.Session(spec.sessionID)
	st := spec.agent.Store()
	req := spec.req
	req.DryRun = dry
	res, err := sess.Restore(ctx, req)
	if err != nil {
		out.err = err
		return out
	}
	msgs, err := st.Messages(ctx, spec.sessionID)
	if err != nil && !dry {
		err = nil // the restore is made; only its labels are missing
	}
	if err != nil {
		out.err = err
		return out
	}
	out.res = res
	if res.Turn > 0 {
		out.turn = labelTurn(msgs, res.Turn)
	}
	if !dry && spec.reload && res.Conversation != nil && res.Conversation.Removed > 0 {
		if loaded, ok := loadSession(ctx, st, spec.sessionID).(sessionLoadedMsg); ok && loaded.err == nil {
			out.loaded = &loaded
		}
	}
	return out
}

// labelTurn names the turn whose prompt has seq turn.
func labelTurn(msgs []session.Message, turn int) turnLabel {
	n := 0
	for _, sm := range msgs {
		if sm.Role != llm.RoleUser || sm.Summary || sm.Reminder {
			continue
		}
		n++
		if sm.Seq == turn {
			return turnLabel{n: n, text: firstLine(typedText(sm.Content))}
		}
	}
	return turnLabel{}
}

// restoreDone shows a preview, or the result of a restore.
func (m *Model) restoreDone(msg restoreDoneMsg) tea.Cmd {
	stopped := m.cancelling
	m.endJob()
	r := m.restore
	if r == nil {
		return m.next()
	}
	if msg.dry && stopped {
		m.restore = nil
		m.notice(noticeInfo, fmt.Sprintf("Stopped: nothing was %s.", pastTense(r.op)), nil)
		return m.next()
	}
	if msg.err != nil {
		var ce *hearth.ConflictError
		if !msg.dry && errors.As(msg.err, &ce) {
			// Files changed between the preview and the answer: nothing
			// was restored; look again.
			r.note = "Files changed since the preview: this is what it would do now."
			return m.startPreview(r.spec)
		}
		m.restore = nil
		if msg.res != nil && !msg.dry {
			// The files were restored; what came after failed.
			m.restoreResult(r, msg)
		}
		m.restoreError(r, msg.err, msg.dry)
		return tea.Batch(m.next(), m.refreshFiles())
	}
	if msg.dry {
		res := msg.res
		if r.turn = msg.turn; r.op != hearth.Rewind && len(res.Files) == 0 && len(res.Failed) == 0 {
			m.restore = nil
			state := "as they were before it"
			if r.op == hearth.Redo {
				state = "as it left them"
			}
			m.notice(noticeInfo, fmt.Sprintf("Nothing to %s: the files %s changed are already %s.", r.op, r.turn, state), nil)
			return m.next()
		}
		if r.op == hearth.Rewind && len(res.Files) == 0 && len(res.Failed) == 0 && (res.Conversation == nil || res.Conversation.Removed == 0) {
			m.restore = nil
			m.notice(noticeInfo, "Nothing to rewind: the files and the conversation are already as they were then.", nil)
			return m.next()
		}
		r.preview, r.stage, r.sel = res, stagePreview, 0
		if len(res.Conflicts) > 0 {
			r.sel = 1 // keep my changes
		}
		m.scroll = 0
		return nil
	}
	m.restore = nil
	m.restoreResult(r, msg)
	return tea.Batch(m.next(), m.refreshFiles())
}

// restoreError says why a restore could not be made (or previewed).
func (m *Model) restoreError(r *restoreState, err error, dry bool) {
	var what string
	switch {
	case errors.Is(err, hearth.ErrNothingToUndo), errors.Is(err, hearth.ErrNothingToRedo):
		msg := hearth.ErrNothingToRedo.Error()
		if errors.Is(err, hearth.ErrNothingToUndo) {
			msg = hearth.ErrNothingToUndo.Error()
		}
		m.notice(noticeInfo, capitalize(msg)+".", nil)
		return
	case errors.Is(err, hearth.ErrNoCheckpoints):
		what = capitalize(hearth.ErrNoCheckpoints.Error()) + "."
		if r.op == hearth.Rewind {
			what += " /rewind can still take back the conversation only."
		}
	case errors.Is(err, hearth.ErrBusy):
		what = "The session is busy: a turn is running in it (here or in another hearth process). Wait for it to end, then try again."
	case errors.Is(err, context.Canceled):
		m.notice(noticeInfo, fmt.Sprintf("Stopped: nothing was %s.", pastTense(r.op)), nil)
		return
	default:
		verb := "Could not " + string(r.op)
		if dry {
			verb = "Could not work out what /" + string(r.op) + " would change"
		}
		what = verb + ": " + strings.TrimPrefix(err.Error(), "hearth: ")
	}
	m.notice(noticeError, what, nil)
}

// cancelRestore drops the restore under way before anything changed.
func (m *Model) cancelRestore() {
	r := m.restore
	if r == nil {
		return
	}
	if r.stage == stageWork {
		if r.applying {
			m.flash("The restore is being made: it cannot stop half-way")
			return
		}
		m.stop() // the preview: its result is dropped
		return
	}
	m.restore = nil
	m.notice(noticeInfo, fmt.Sprintf("Cancelled: nothing was %s.", pastTense(r.op)), nil)
}

func pastTense(op hearth.RestoreOp) string {
	switch op {
	case hearth.Undo:
		return "undone"
	case hearth.Redo:
		return "redone"
	}
	return "rewound"
}

// restoreKey handles a key while the restore's panel shows.
func (m *Model) restoreKey(msg tea.KeyPressMsg) tea.Cmd {
	r := m.restore
	k := msg.String()
	if k == "esc" {
		m.cancelRestore()
		return nil
	}
	move := func(n int) {
		switch k {
		case "up", "k", "ctrl+p", "left":
			r.sel = (r.sel + n - 1) % n
		case "down", "j", "ctrl+n", "tab", "right":
			r.sel = (r.sel + 1) % n
		case "home":
			r.sel = 0
		case "end":
			r.sel = n - 1
		}
	}
	switch r.stage {
	case stagePick:
		switch k {
		case "enter", "space":
			p := r.points[r.sel]
			r.point, r.stage, r.sel = &p, stageScope, 0
		case "q", "n":
			m.cancelRestore()
		default:
			move(len(r.points))
		}
	case stageScope:
		switch k {
		case "1", "2", "3":
			r.sel = int(k[0] - '1')
			fallthrough
		case "enter", "space":
			r.scope = rewindScopes[r.sel].scope
			return m.startPreview(m.rewindSpec(*r.point, r.scope))
		case "q", "n":
			m.cancelRestore()
		default:
			move(len(rewindScopes))
		}
	case stagePreview:
		if len(r.preview.Conflicts) == 0 {
			switch k {
			case "y", "enter":
				return m.apply(false)
			case "n", "q":
				m.cancelRestore()
			}
			return nil
		}
		choice := -1
		switch k {
		case "1", "o":
			choice = 0
		case "2", "k":
			choice = 1
		case "3", "n", "q":
			choice = 2
		case "enter", "space":
			choice = r.sel
		default:
			move(len(conflictChoices))
		}
		switch choice {
		case 0:
			return m.apply(true)
		case 1:
			return m.apply(false)
		case 2:
			m.cancelRestore()
		}
	}
	return nil
}

// restoreResult puts what a restore did in the conversation; a rewind of
// the conversation shows the session as it is now, and the prompt rewound
// to goes back into the input.
func (m *Model) restoreResult(r *restoreState, msg restoreDoneMsg) {
	res := msg.res
	if msg.loaded != nil {
		notes := m.shellNotes
		m.showSession(*msg.loaded)
		m.shellNotes = notes
	}
	title, body, problems, notes, kind := m.describeResult(r, res, msg.turn)
	m.tr.add(&textItem{kind: kind, title: title, body: body, problems: problems, notes: notes})
	m.scroll = 0
	if r.point != nil && msg.spec.reload && res.Conversation != nil {
		m.input.SetValue(r.point.text)
		m.comp = compState{dismissed: m.input.Value()}
		m.histIdx = len(m.history)
	}
}

// describeResult is the conversation's record of a restore.
func (m *Model) describeResult(r *restoreState, res *hearth.RestoreResult, turn turnLabel) (title string, body, problems, notes []string, kind noticeKind) {
	th := m.th
	files := plural(len(res.Files), "file") + " restored"
	var head string
	switch r.op {
	case hearth.Undo:
		head = "Undid " + turn.String()
	case hearth.Redo:
		head = "Redid " + turn.String()
	default:
		head = "Rewound to before " + r.pointLabel()
	}
	parts := []string{}
	if r.op != hearth.Rewind || r.scope != scopeConversation {
		parts = append(parts, files)
	}
	if c := res.Conversation; c != nil {
		parts = append(parts, plural(c.Removed, "message")+" removed")
	}
	title = head + ": " + strings.Join(parts, ", ") + "."
	body = append(body, fileLines(th, res.Files, nil, 20)...)
	if len(res.Kept) > 0 {
		body = append(body, th.warnText.Render("kept as you changed them: "+clean(strings.Join(res.Kept, ", "))))
	}
	for _, f := range res.Failed {
		problems = append(problems, "✗ could not restore "+f.Path+": "+f.Reason)
	}
	if res.Checkpoint > 0 {
		notes = append(notes, fmt.Sprintf("The files as they were just before are kept in checkpoint %d.", res.Checkpoint))
	}
	if c := res.Conversation; c != nil && c.Archived != "" {
		notes = append(notes, "The conversation before the rewind is kept in the archived session "+c.Archived+".")
	}
	if r.point != nil && r.scope != scopeFiles && res.Conversation != nil {
		notes = append(notes, "Your message is back in the input box: edit it and send it again.")
	}
	kind = noticeInfo
	if len(res.Failed) > 0 {
		kind = noticeWarn
	}
	return title, body, problems, notes, kind
}

func (r *restoreState) pointLabel() string {
	if r.point == nil {
		return "a message"
	}
	return fmt.Sprintf("message %d “%s”", r.point.n, clean(r.point.label()))
}

// fileLines lists files and what a restore does to each, conflicts marked,
// up to limit lines.
func fileLines(th *theme, files []agent.FileChange, conflicts map[string]bool, limit int) []string {
	var out []string
	for i, f := range files {
		if i == limit && len(files) > limit+1 {
			out = append(out, th.subtle.Render(fmt.Sprintf("… and %s", plural(len(files)-limit, "more file"))))
			break
		}
		line := fmt.Sprintf("%-7s %s", f.Action, clean(f.Path))
		if conflicts[f.Path] {
			out = append(out, th.warnText.Render("! "+line+"  (changed after the agent changed it)"))
			continue
		}
		out = append(out, "  "+th.base.Render(line))
	}
	return out
}

// ---- the panel ----

// renderRestore draws the restore's panel in the input's place.
func (m *Model) renderRestore() string {
	th := m.th
	r := m.restore
	inner := max(m.width-4, 10)
	// The panel leaves the conversation a few lines.
	room := max(m.height-10, 6)
	var lines []string
	title := func(s string) { lines = append(lines, th.accentText.Render(xansi.Truncate(s, inner, "…"))) }
	hint := func(s string) { lines = append(lines, th.subtle.Render(xansi.Truncate(s, inner, "…"))) }
	switch r.stage {
	case stagePick:
		title("Rewind to before which message?")
		n := min(len(r.points), max(room-2, 3))
		from := 0
		if r.sel >= n {
			from = r.sel - n + 1
		}
		for i := from; i < min(from+n, len(r.points)); i++ {
			p := r.points[i]
			label := xansi.Truncate(fmt.Sprintf("%d. %s", p.n, clean(p.label())), inner-2, "…")
			if i == r.sel {
				lines = append(lines, th.selected.Render("› "+label))
			} else {
				lines = append(lines, "  "+th.base.Render(label))
			}
		}
		if rest := len(r.points) - from - n; rest > 0 {
			hint(fmt.Sprintf("  … %s", plural(rest, "earlier message")))
		}
		hint("newest first · ↑↓ enter · esc cancels")
	case stageScope:
		title("Rewind to before " + r.pointLabel() + ": what?")
		for i, s := range rewindScopes {
			label := fmt.Sprintf("%d. %s", i+1, s.label)
			if i == r.sel {
				lines = append(lines, th.selected.Render("› "+label))
			} else {
				lines = append(lines, "  "+th.muted.Render(label))
			}
		}
		hint("1–3 · ↑↓ enter · esc cancels")
	case stageWork:
		title(m.restoreQuestion())
		lines = append(lines, th.muted.Render(m.jobLabel))
	case stagePreview:
		lines = m.renderPreview(inner, room)
	}
	border := th.accent
	if r.stage == stagePreview && len(r.preview.Conflicts) > 0 {
		border = th.warn
	}
	return th.border(border).Width(m.width).Render(strings.Join(lines, "\n"))
}

// restoreQuestion is the preview's title.
func (m *Model) restoreQuestion() string {
	r := m.restore
	switch r.op {
	case hearth.Undo:
		return "Undo " + r.turn.String() + "?"
	case hearth.Redo:
		return "Redo " + r.turn.String() + "?"
	}
	what := map[rewindScope]string{scopeBoth: "files and conversation", scopeFiles: "files only", scopeConversation: "conversation only"}[r.scope]
	return "Rewind to before " + r.pointLabel() + " (" + what + ")?"
}

// renderPreview is the panel's preview: the files, what cannot be
// restored, the conflicts and the choices.
func (m *Model) renderPreview(inner, room int) []string {
	th := m.th
	r := m.restore
	res := r.preview
	var lines []string
	add := func(st func(...string) string, s string) {
		for _, l := range wrapPlain(s, inner) {
			lines = append(lines, st(l))
		}
	}
	add(th.accentText.Render, m.restoreQuestion())
	if r.note != "" {
		add(th.warnText.Render, r.note)
	}
	conflicts := map[string]bool{}
	for _, c := range res.Conflicts {
		conflicts[c] = true
	}
	// The fixed lines: the question, the conversation, the failures, the
	// conflicts' explanation and choices, the hint.
	fixed := len(lines) + 2 + len(res.Failed)
	if len(res.Conflicts) > 0 {
		fixed += 2 + len(conflictChoices)
	}
	filesRoom := max(room-fixed, 3)
	files := r.op != hearth.Rewind || r.scope != scopeConversation
	switch {
	case !files:
	case len(res.Files) == 0:
		lines = append(lines, th.muted.Render("No file changes."))
	default:
		// Conflicts first: they are what the user must decide on.
		ordered := make([]agent.FileChange, 0, len(res.Files))
		for _, f := range res.Files {
			if conflicts[f.Path] {
				ordered = append(ordered, f)
			}
		}
		for _, f := range res.Files {
			if !conflicts[f.Path] {
				ordered = append(ordered, f)
			}
		}
		for _, l := range fileLines(th, ordered, conflicts, filesRoom-1) {
			lines = append(lines, xansi.Truncate(l, inner, "…"))
		}
	}
	for _, f := range res.Failed {
		add(th.failText.Render, "✗ cannot restore "+clean(f.Path)+": "+clean(f.Reason))
	}
	if c := res.Conversation; c != nil {
		add(th.muted.Render, fmt.Sprintf("Conversation: the %s after it removed (kept in an archived session).", plural(c.Removed, "message")))
	}
	if len(res.Conflicts) == 0 {
		lines = append(lines, th.subtle.Render(fmt.Sprintf("y/enter %s · n/esc cancel", r.op)))
		return lines
	}
	add(th.warnText.Render, fmt.Sprintf("! %s changed after the agent changed %s (by you, an editor, a formatter…): %s would overwrite that work.",
		plural(len(res.Conflicts), "file was"), themOrIt(len(res.Conflicts)), r.op))
	for i, c := range conflictChoices {
		label := fmt.Sprintf("%d. %s", i+1, c)
		if i == r.sel {
			lines = append(lines, th.selected.Render("› "+label))
		} else {
			lines = append(lines, "  "+th.muted.Render(label))
		}
	}
	lines = append(lines, th.subtle.Render("1–3 or o/k/n · ↑↓ enter · esc cancels"))
	return lines
}

func themOrIt(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// ---- the prompts, as typed ----

// typedText is what the user typed, from a stored prompt: without the
// output of !commands sent with it (before it), nor the files its @paths
// attached (after it).
func typedText(stored string) string {
	s := stored
	const notes = "Output of commands I ran:\n"
	if rest, ok := strings.CutPrefix(s, notes); ok {
		if p, ok := afterNotes(rest); ok {
			s = p
		}
	}
	cut := len(s)
	for _, ref := range atRefs(s) {
		for _, mark := range []string{"\n\nContent of " + ref + ":\n", "\n\nContent of " + ref + " (first ", "\n\nContents of the directory " + ref + ":\n"} {
			if i := strings.Index(s, mark); i >= 0 && i < cut {
				cut = i
			}
		}
	}
	return strings.TrimSpace(s[:cut])
}

// afterNotes skips the !command notes at the start of rest: each is
// "$ command\n```\noutput\n```", joined by a newline and followed by a
// blank line and the prompt.
func afterNotes(rest string) (string, bool) {
	for strings.HasPrefix(rest, "$ ") {
		open := strings.Index(rest, "\n```\n")
		if open < 0 {
			return "", false
		}
		body := rest[open+4:] // from the newline that ends the fence
		next := ""
		found := false
		for j := 0; j < len(body); {
			k := strings.Index(body[j:], "\n```")
			if k < 0 {
				break
			}
			k += j
			after := body[k+4:]
			if strings.HasPrefix(after, "\n$ ") {
				next, found = after[1:], true
				break
			}
			if p, ok := strings.CutPrefix(after, "\n\n"); ok {
				return p, true
			}
			j = k + 1
		}
		if !found {
			return "", false
		}
		rest = next
	}
	return "", false
}

// firstLine is the first line of s that is not blank.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

// capitalize upper-cases the first letter of an error's message.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
