package tui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// Messages from the worker goroutines and asynchronous commands.
type (
	// eventMsg is one event of the running turn.
	eventMsg struct{ ev agent.Event }
	// turnDoneMsg says the turn's goroutine finished (after the done
	// event and the session title).
	turnDoneMsg struct {
		out *hearth.Result
		err error
	}
	// turnStartedMsg hands the program the turn that runs, to answer its
	// approvals; it comes before the turn's first event.
	turnStartedMsg struct{ turn *hearth.Turn }
	// shellDoneMsg says a !command finished.
	shellDoneMsg struct {
		command, output string
		err             error
	}
	// compressDoneMsg says /compress finished.
	compressDoneMsg struct {
		before, after int
		err           error
	}
	// noticeMsg adds a notice to the transcript.
	noticeMsg struct {
		kind  noticeKind
		title string
		body  []string
	}
	healthMsg struct {
		err error
		at  time.Time
	}
	modelsMsg struct {
		models []llm.ModelInfo
		err    error
		show   bool
	}
	modelInfoMsg struct {
		model string
		info  *llm.ModelInfo
		err   error
	}
	sessionsMsg struct {
		list []session.Session
		err  error
		show bool
	}
	sessionLoadedMsg struct {
		sess *session.Session
		msgs []session.Message
		runs []session.ToolRun
		// checkpoints mark the calls they were taken before.
		checkpoints []session.Checkpoint
		err         error
	}
	sessionTitleMsg struct{ id, title string }
	filesMsg        struct{ files []string }
	historyMsg      struct{ entries []string }
	tickMsg         time.Time
)

// jobs tracks the worker goroutines, so that quitting can wait for them.
type jobs struct{ wg sync.WaitGroup }

func (j *jobs) start(f func()) {
	j.wg.Add(1)
	go func() {
		defer j.wg.Done()
		f()
	}()
}

// waitFor waits for the jobs up to d; it reports whether they all ended.
func (j *jobs) waitFor(d time.Duration) bool {
	done := make(chan struct{})
	go func() { j.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// turnSpec is what a turn needs, copied out of the model so that the
// goroutine shares nothing with it.
type turnSpec struct {
	agent     *hearth.Agent
	sessionID string
	model     string // "" for the agent's
	prompt    string
}

// runTurn runs one conversation turn on its own goroutine; its events reach
// the program through b, the turn itself first (to answer approvals).
func runTurn(ctx context.Context, b *bridge, t turnSpec) {
	prompt, notes := attachFiles(t.agent.Files(), t.prompt)
	for _, n := range notes {
		b.send(noticeMsg{kind: noticeWarn, title: n})
	}
	turn := t.agent.NewTurn(ctx, hearth.Request{SessionID: t.sessionID, Message: prompt, Model: t.model})
	b.send(turnStartedMsg{turn})
	for ev := range turn.Events() {
		b.send(eventMsg{ev})
	}
	out, err := turn.Result()
	if out != nil {
		if err != nil && err == out.Err {
			err = nil // the turn's failure: its events said it
		}
		if s, gerr := t.agent.Store().Get(context.WithoutCancel(ctx), out.SessionID); gerr == nil {
			b.send(sessionTitleMsg{id: s.ID, title: s.Title})
		}
	}
	b.send(turnDoneMsg{out: out, err: err})
}

// runShell runs a !command through the shell tool (its checks and
// confinement included) and streams its output as tool events.
func runShell(ctx context.Context, b *bridge, sh tool.Tool, id, command string) {
	args, _ := json.Marshal(map[string]string{"command": command})
	name := sh.Spec().Name
	b.send(eventMsg{agent.Event{Type: agent.EventToolCall, ID: id, Name: name, Args: args}})
	var out strings.Builder
	res, err := sh.Run(ctx, tool.Call{ID: id, Args: args, Progress: func(chunk string) {
		out.WriteString(chunk)
		b.send(eventMsg{agent.Event{Type: agent.EventToolOutput, ID: id, Name: name, Text: chunk}})
	}})
	ev := agent.Event{Type: agent.EventToolResult, ID: id, Name: name, OK: err == nil, Output: res.Output, Display: res.Display}
	if err != nil {
		ev.Error = err.Error()
	}
	b.send(eventMsg{ev})
	text := res.Output
	if err != nil {
		text = "Error: " + err.Error()
		if o := out.String(); o != "" {
			text = o + "\n" + text
		}
	}
	b.send(shellDoneMsg{command: command, output: text, err: err})
}

// maxAttach bounds one attached file.
const maxAttach = 256 << 10

// attachFiles appends the workspace files named with @path in prompt.
// notes say which could not be attached and why.
func attachFiles(ws *sandbox.Workspace, prompt string) (string, []string) {
	if ws == nil {
		return prompt, nil
	}
	var b strings.Builder
	var notes []string
	seen := map[string]bool{}
	for _, ref := range atRefs(prompt) {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		p, err := ws.Resolve(ref, sandbox.Read)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s not attached: %v", ref, err))
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s not attached: no such file in the workspace", ref))
			continue
		}
		if fi.IsDir() {
			ents, _ := os.ReadDir(p)
			fmt.Fprintf(&b, "\n\nContents of the directory %s:\n", ref)
			for i, e := range ents {
				if i == 200 {
					fmt.Fprintf(&b, "… and %d more\n", len(ents)-200)
					break
				}
				n := e.Name()
				if e.IsDir() {
					n += "/"
				}
				b.WriteString(n + "\n")
			}
			continue
		}
		data, err := readHead(p, maxAttach)
		if err != nil {
			notes = append(notes, fmt.Sprintf("@%s not attached: %v", ref, err))
			continue
		}
		if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
			notes = append(notes, fmt.Sprintf("@%s not attached: it is not a text file", ref))
			continue
		}
		note := ""
		if fi.Size() > maxAttach {
			note = fmt.Sprintf(" (first %d KB of %d KB)", maxAttach>>10, fi.Size()>>10)
		}
		fmt.Fprintf(&b, "\n\nContent of %s%s:\n```\n%s\n```", ref, note, strings.TrimRight(string(data), "\n"))
	}
	if b.Len() == 0 {
		return prompt, notes
	}
	return prompt + b.String(), notes
}

func readHead(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// atRefs returns the @path references in s: an @ at the start or after a
// space, up to the next space.
func atRefs(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '@' || (i > 0 && !isSpace(s[i-1])) {
			continue
		}
		j := i + 1
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		ref := strings.TrimRight(s[i+1:j], ".,;:!?)")
		if ref != "" {
			out = append(out, ref)
		}
		i = j
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// compressSession summarises the older part of a stored session, as the
// agent does on its own near the context limit, and says how large the
// history was before and after (estimated tokens).
func compressSession(ctx context.Context, st session.Store, sess *hearth.Session, model string, window int) (before, after int, err error) {
	id := sess.ID()
	size := func() int {
		msgs, err := st.Messages(ctx, id)
		if err != nil {
			return 0
		}
		return agent.EstimateTokens(session.History(msgs), nil)
	}
	before = size()
	keep := 2048
	if window > 0 {
		keep = max(window/5, 512)
	}
	if before <= keep {
		keep = before / 3
	}
	if err := sess.Compress(ctx, model, keep); err != nil {
		return before, before, err
	}
	return before, size(), nil
}

// ---- asynchronous commands: I/O never runs in Update ----

func healthCmd(p llm.Provider) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := llm.Health(ctx, p)
		return healthMsg{err: err, at: time.Now()}
	}
}

func modelsCmd(p llm.Provider, show bool) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ms, err := llm.Models(ctx, p)
		return modelsMsg{models: ms, err: err, show: show}
	}
}

func modelInfoCmd(p llm.Provider, model string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		mi, err := llm.Describe(ctx, p, model)
		return modelInfoMsg{model: model, info: mi, err: err}
	}
}

func sessionsCmd(st session.Store, show bool) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		list, err := st.List(ctx, session.ListOptions{Limit: 30})
		return sessionsMsg{list: list, err: err, show: show}
	}
}

func loadSessionCmd(st session.Store, id string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return loadSession(ctx, st, id)
	}
}

// loadSession reads what showing a stored session needs: the session, its
// messages, the records of its tool runs and its checkpoints.
func loadSession(ctx context.Context, st session.Store, id string) tea.Msg {
	s, err := st.Get(ctx, id)
	if err != nil {
		return sessionLoadedMsg{err: err}
	}
	msgs, err := st.Messages(ctx, id)
	if err != nil {
		return sessionLoadedMsg{err: err}
	}
	runs, _ := st.ToolRuns(ctx, id)
	cps, _ := st.Checkpoints(ctx, id)
	return sessionLoadedMsg{sess: s, msgs: msgs, runs: runs, checkpoints: cps}
}

func renameCmd(st session.Store, id, title string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := st.Rename(ctx, id, title); err != nil {
			return noticeMsg{kind: noticeError, title: "Could not rename the session: " + err.Error()}
		}
		return sessionTitleMsg{id: id, title: title}
	}
}

// maxFiles bounds the @path completion list.
const maxFiles = 20000

// skipDirs are not offered for @path completion.
var skipDirs = map[string]bool{".git": true, "node_modules": true, ".hg": true, ".svn": true, "__pycache__": true, ".venv": true, "vendor": true, "target": true, "dist": true, ".cache": true}

func filesCmd(root string) tea.Cmd {
	return func() tea.Msg {
		var files []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || len(files) >= maxFiles {
				if d != nil && d.IsDir() && p != root {
					return filepath.SkipDir
				}
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			if rel == "." {
				return nil
			}
			if d.IsDir() {
				if skipDirs[d.Name()] || (strings.HasPrefix(d.Name(), ".") && d.Name() != ".github") {
					return filepath.SkipDir
				}
				files = append(files, filepath.ToSlash(rel)+"/")
				return nil
			}
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		sort.Strings(files)
		return filesMsg{files: files}
	}
}

// history keeps the prompts a user sent, one JSON string a line.
type history struct {
	path string
	mu   sync.Mutex
}

// maxHistory is how many prompts are kept.
const maxHistory = 500

func (h *history) loadCmd() tea.Cmd {
	return func() tea.Msg {
		if h == nil || h.path == "" {
			return historyMsg{}
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		f, err := os.Open(h.path)
		if err != nil {
			return historyMsg{}
		}
		defer f.Close()
		var out []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var s string
			if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
				out = append(out, s)
			}
		}
		if len(out) > maxHistory {
			out = out[len(out)-maxHistory:]
		}
		return historyMsg{entries: out}
	}
}

func (h *history) appendCmd(entry string) tea.Cmd {
	if h == nil || h.path == "" {
		return nil
	}
	return func() tea.Msg {
		h.mu.Lock()
		defer h.mu.Unlock()
		if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
			return nil
		}
		f, err := os.OpenFile(h.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil
		}
		b, _ := json.Marshal(entry)
		f.Write(append(b, '\n'))
		f.Close()
		return nil
	}
}
