package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// jobKind is the work running on a goroutine, at most one at a time.
type jobKind uint8

const (
	jobNone jobKind = iota
	jobTurn
	jobShell
	jobCompress
	jobRestore // an /undo, /redo or /rewind: its preview, or the restore
)

// jobState is the work running on a goroutine (a turn, a !command or a
// summary: one at a time), the messages queued behind it, and what the
// current turn has drawn.
type jobState struct {
	// bridge carries the workers' messages to the program; jobs tracks
	// the workers, so that Close can wait for them.
	bridge *bridge
	jobs   *jobs

	job        jobKind
	cancel     context.CancelFunc
	cancelling bool
	jobStart   time.Time
	jobLabel   string // what the activity line says runs
	// queue holds the messages sent while work ran, sent after it in turn.
	queue []string

	// turn is the running turn, which approvals answer (nil between
	// turns).
	turn *hearth.Turn
	cur  turnState
	// tools are the tool calls' transcript entries, by call ID.
	tools map[string]*entry

	// shellN numbers the !commands (their call IDs are user_N);
	// shellNotes is their output, which goes with the next message.
	shellN     int
	shellNotes []string
}

// prompt sends a message to the model, or queues it behind running work.
func (m *Model) prompt(text string) tea.Cmd {
	if m.job != jobNone {
		m.queue = append(m.queue, text)
		return nil
	}
	return m.startTurn(text)
}

// startTurn runs a turn for text on a worker goroutine, with the output
// of the !commands run since the last one.
func (m *Model) startTurn(text string) tea.Cmd {
	if m.model == "" {
		m.notice(noticeError, "No model chosen: pick one with /model NAME (/model lists them), or start hearth with --model.", nil)
		return nil
	}
	m.tr.add(&userItem{text: text})
	m.planPrompted()
	full := m.expandPastes(text)
	if len(m.shellNotes) > 0 {
		full = "Output of commands I ran:\n" + strings.Join(m.shellNotes, "\n") + "\n\n" + full
		m.shellNotes = nil
	}
	id := m.currentID()
	if id == "" {
		id = session.NewID()
		m.draftID = id
	}
	// The session keeps the mode the user chose here, for this turn and
	// the next.
	if err := m.agent.Session(id).SetMode(m.mode); err != nil {
		m.notice(noticeError, err.Error(), nil)
		return nil
	}
	model := ""
	if m.model != m.agent.Model() {
		model = m.model
	}
	spec := turnSpec{agent: m.agent, sessionID: id, model: model, prompt: full}
	ctx, cancel := context.WithCancel(context.Background())
	m.beginJob(jobTurn, cancel, "Thinking…")
	m.cur = turnState{}
	m.stats.turns++
	b := m.bridge
	m.jobs.start(func() { runTurn(ctx, b, spec) })
	return m.startTick()
}

// beginJob marks work of kind k as running, stopped with cancel and shown
// as label.
func (m *Model) beginJob(k jobKind, cancel context.CancelFunc, label string) {
	m.job, m.cancel, m.cancelling = k, cancel, false
	m.jobStart, m.jobLabel = m.now(), label
}

// endJob marks the work ended: it releases its context, counts a turn's
// time, and drops the turn and any approval prompt.
func (m *Model) endJob() {
	if m.cancel != nil {
		m.cancel()
	}
	if m.job == jobTurn {
		m.stats.modelTime += m.now().Sub(m.jobStart)
	}
	m.job, m.cancel, m.cancelling = jobNone, nil, false
	m.turn = nil
	if m.approval != nil {
		m.approval = nil
	}
}

// next starts the first queued message, if any.
func (m *Model) next() tea.Cmd {
	if m.job != jobNone || len(m.queue) == 0 {
		return nil
	}
	text := m.queue[0]
	m.queue = m.queue[1:]
	return m.startTurn(text)
}

// stop cancels the running turn, command or summary, keeping what came.
// A restore being made is not stopped half-way.
func (m *Model) stop() {
	if m.job == jobRestore && m.cancel == nil {
		m.flash("The restore is being made: it cannot stop half-way")
		return
	}
	if m.cancel != nil && !m.cancelling {
		m.cancel()
		m.cancelling = true
	}
	m.queue = nil
}

// shell runs a !command through the shell tool.
func (m *Model) shell(command string) tea.Cmd {
	if command == "" {
		m.notice(noticeInfo, "Type a command after !, for example: !git status", nil)
		return nil
	}
	if m.job != jobNone {
		m.notice(noticeWarn, "Wait for the running turn to finish (or press Esc) before running a command.", nil)
		return nil
	}
	sh := m.shellTool()
	if sh == nil {
		m.notice(noticeError, "The shell tool is not available in this build.", nil)
		return nil
	}
	m.tr.add(&userItem{text: command, shell: true})
	m.shellN++
	id := fmt.Sprintf("user_%d", m.shellN)
	ctx, cancel := context.WithCancel(context.Background())
	m.beginJob(jobShell, cancel, "Running "+command)
	b := m.bridge
	m.jobs.start(func() { runShell(ctx, b, sh, id, command) })
	return m.startTick()
}

// shellTool is the session's run_shell_command (a new conversation gets
// its session now: the command's temp files are the session's).
func (m *Model) shellTool() tool.Tool {
	if m.agent.Workspace() == "" {
		return nil
	}
	id := m.currentID()
	if id == "" {
		id = session.NewID()
		m.draftID = id
	}
	t, ok := m.agent.Session(id).Tool("run_shell_command")
	if !ok {
		return nil
	}
	return t
}

// shellDone keeps a !command's output (up to its last 16 KB) for the next
// message.
func (m *Model) shellDone(msg shellDoneMsg) tea.Cmd {
	m.endJob()
	out := msg.output
	if len(out) > 16<<10 {
		out = "[…]\n" + out[len(out)-16<<10:]
	}
	m.shellNotes = append(m.shellNotes, fmt.Sprintf("$ %s\n```\n%s\n```", msg.command, strings.TrimRight(out, "\n")))
	m.flash("The output goes with your next message")
	return tea.Batch(m.next(), m.refreshFiles())
}

// refreshFiles lists the workspace's files again (the work may have
// changed them).
func (m *Model) refreshFiles() tea.Cmd {
	root := m.agent.Workspace()
	if root == "" {
		return nil
	}
	return filesCmd(root)
}
