package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
)

// Model is the terminal UI's Bubble Tea model. Create it with New; Run
// runs it on the terminal.
//
// Its state comes in parts, embedded so that their fields read as the
// model's own (m.job, m.input, m.sessionID). Each part's type is in the file
// with the methods that mostly work on it.
type Model struct {
	opts  Options
	agent *hearth.Agent
	now   func() time.Time

	viewState    // the window, the theme, the transcript and its scrolling (view.go)
	inputState   // the input box: prompt history, pastes, completion (input.go)
	jobState     // the work on a goroutine and the turn it draws (job.go, events.go)
	sessionState // the session the conversation goes to, its approval mode (session.go)
	serverState  // the model server and the chosen model (server.go)
	planState    // the model's plan, pinned above the input (plan.go)

	// approval is the call waiting for the user (nil when none): its
	// prompt takes the input's place until answered (approval.go).
	approval *approvalState
	// restore is the /undo, /redo or /rewind under way (nil when none):
	// its panel takes the input's place until done (restore.go).
	restore *restoreState
	stats   stats // for /stats
}

// stats are what /stats reports.
type stats struct {
	turns                 int
	inputTokens, outputs  int
	modelTime             time.Duration
	toolCalls, toolFailed int
	started               time.Time
}

// New builds the model. o.Agent is required.
func New(o Options) (*Model, error) {
	if o.Agent == nil {
		return nil, errors.New("tui: no agent: build one with hearth.New first")
	}
	if o.Theme == "" {
		o.Theme = "auto"
	}
	m := &Model{
		opts:  o,
		agent: o.Agent,
		now:   time.Now,
		viewState: viewState{
			width:  80,
			height: 24,
			dark:   o.Theme != "light",
		},
		inputState: inputState{
			pastes: map[string]string{},
			hist:   &history{path: o.HistoryFile},
		},
		jobState: jobState{
			bridge: newBridge(),
			jobs:   &jobs{},
			tools:  map[string]*entry{},
		},
		sessionState: sessionState{
			sessionID: o.SessionID,
			mode:      o.Agent.Mode(),
		},
		serverState: serverState{model: o.Agent.Model()},
	}
	if m.mode == "" {
		m.mode = agent.ModeDefault
	}
	if m.sessionID != "" {
		m.mode = o.Agent.Session(m.sessionID).Mode()
	}
	if o.Width > 0 && o.Height > 0 {
		m.width, m.height = o.Width, o.Height
	}
	if root := o.Agent.Workspace(); root != "" {
		m.wsLabel = homeRel(root)
	}
	m.stats.started = time.Now()
	m.input = newInput()
	m.setTheme()
	m.banner()
	m.resize()
	return m, nil
}

// homeRel shortens a path under the home directory to ~/….
func homeRel(p string) string {
	if h, err := os.UserHomeDir(); err == nil && h != "" && h != "/" {
		if r, err := filepath.Rel(h, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.Join("~", r)
		}
	}
	return p
}

// Init starts the background work: the bridge, a health check, the model
// and file lists, the prompt history, the terminal's background colour,
// and a resumed session.
func (m *Model) Init() tea.Cmd {
	p := m.agent.Provider()
	cmds := []tea.Cmd{m.bridge.wait(), healthCmd(p), modelsCmd(p, false), m.hist.loadCmd()}
	if root := m.agent.Workspace(); root != "" {
		cmds = append(cmds, filesCmd(root))
	}
	st := m.agent.Store()
	cmds = append(cmds, sessionsCmd(st, false))
	if m.sessionID != "" {
		cmds = append(cmds, loadSessionCmd(st, m.sessionID))
	}
	if m.opts.Theme == "auto" && !m.opts.NoColor {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.model != "" && m.ctxLen == 0 {
		cmds = append(cmds, modelInfoCmd(p, m.model))
	}
	return tea.Batch(cmds...)
}

// Update handles a message; see handle.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmds []tea.Cmd
	if b, ok := msg.(batchMsg); ok {
		for _, x := range b {
			cmds = append(cmds, m.handle(x))
		}
		cmds = append(cmds, m.bridge.wait())
	} else {
		cmds = append(cmds, m.handle(msg))
	}
	m.layout()
	return m, tea.Batch(cmds...)
}

// handle handles one message: a key, the window, a worker's message, or
// what an asynchronous command brought.
func (m *Model) handle(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.resize()
	case tea.BackgroundColorMsg:
		if m.opts.Theme == "auto" && msg.IsDark() != m.dark {
			m.dark = msg.IsDark()
			m.setTheme()
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.scrollBy(3)
		case tea.MouseWheelDown:
			m.scrollBy(-3)
		}
	case tickMsg:
		m.frame++
		if m.animating() {
			return m.tick()
		}
		m.ticking = false
	case eventMsg:
		return m.event(msg.ev)
	case turnStartedMsg:
		m.turn = msg.turn
		if m.sessionID == "" {
			m.sessionID = msg.turn.SessionID()
		}
	case turnDoneMsg:
		return m.turnDone(msg)
	case shellDoneMsg:
		return m.shellDone(msg)
	case compressDoneMsg:
		m.endJob()
		if msg.err != nil {
			m.notice(noticeError, "Could not compress the session: "+msg.err.Error(), nil)
		} else {
			m.notice(noticeInfo, fmt.Sprintf("Compressed the session: about %d tokens of history became %d.", msg.before, msg.after), nil)
			m.ctxUsed = msg.after
		}
		return m.next()
	case rewindPointsMsg:
		return m.rewindPointsLoaded(msg)
	case restoreDoneMsg:
		return m.restoreDone(msg)
	case noticeMsg:
		m.notice(msg.kind, msg.title, msg.body)
	case healthMsg:
		return m.health(msg)
	case modelsMsg:
		return m.modelsLoaded(msg)
	case modelInfoMsg:
		if msg.err == nil && msg.info != nil && msg.model == m.model {
			m.ctxLen = msg.info.ContextLength
		}
	case sessionsMsg:
		return m.sessionsLoaded(msg)
	case sessionLoadedMsg:
		return m.sessionLoaded(msg)
	case sessionTitleMsg:
		if msg.id == m.sessionID {
			m.sessionTitle = msg.title
		}
	case filesMsg:
		m.files = msg.files
		m.complete()
	case historyMsg:
		m.history = append(msg.entries, m.history...)
		m.histIdx = len(m.history)
	default:
		// cursor blinks and the like
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return cmd
	}
	return nil
}
