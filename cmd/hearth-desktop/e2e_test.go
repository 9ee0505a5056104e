//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/prefs"
)

// TestDesktop runs the real application in a real X server (Xvfb), on a
// session bus of its own, against the scripted fake model server, and uses
// it as a person would: keys typed and clicks made with xdotool, into the
// window. What the window shows is read from the page itself (the probe,
// probe.go: the text the web view renders and where its controls are), not
// from the API. It checks the answer and the reasoning stream into the
// window, a tool card, an approval given with a click (and the notification
// sent while the window was in the background), the menu's shortcuts, the
// single instance, the remembered window, and a quit during a turn: asked
// first, then the turn stopped and stored, nothing lost.
//
//	scripts/desktop.sh                       # installs what it needs, builds, runs this
//	HEARTH_SCREENSHOTS=$PWD/docs/screenshots scripts/desktop.sh
//
// It needs Xvfb, xdotool, dbus-daemon and ImageMagick's import; it skips
// without them unless HEARTH_DESKTOP_E2E=1 (in CI), where their absence
// fails.
func TestDesktop(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the desktop app and drives it in Xvfb")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "dbus-daemon", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("HEARTH_DESKTOP_E2E") != "" {
				t.Fatalf("%s is missing (scripts/desktop.sh installs it): %v", tool, err)
			}
			t.Skipf("%s is missing (scripts/desktop.sh installs it)", tool)
		}
	}
	bin := buildApp(t)
	d := newDesk(t, bin)

	// The scripted model: what it does depends on a marker in the prompt.
	d.srv.Respond("/api/chat", func(r llmtest.Request) (llmtest.Scenario, bool) {
		return deskModel(r), true
	})

	d.start(t, d.ws)
	d.waitText(t, "the page, with its workspace", "What shall we work on?", "asks first", filepath.Base(d.ws))
	d.calibrate(t)

	t.Run("no port: the page reaches the API inside the process", func(t *testing.T) {
		if n := len(tree(d.cmd.Process.Pid)); n < 2 {
			t.Fatalf("found %d processes of the app, want it and its web view's", n)
		}
		if ports := listening(t, d.cmd.Process.Pid); len(ports) > 0 {
			t.Fatalf("the app listens on %v: other programs could reach the API", ports)
		}
	})

	t.Run("answer and reasoning stream into the window", func(t *testing.T) {
		d.send(t, "Say hello [think]")
		// Seen while the model still works: the reasoning, then the
		// answer's first half without its second.
		d.waitFor(t, "the reasoning, streamed", func(p probe) bool { return strings.Contains(p.Text, "Weighing how to greet") })
		d.waitFor(t, "the answer's first half, streamed", func(p probe) bool {
			return strings.Contains(p.Text, "Hello from") && !strings.Contains(p.Text, "the desktop window")
		})
		d.waitText(t, "the whole answer", "Hello from the desktop window.")
	})

	t.Run("a tool card", func(t *testing.T) {
		d.send(t, "What does the readme say? [tool]")
		d.waitFor(t, "a done read_file card", func(p probe) bool {
			return p.has(func(e element) bool {
				return e.Testid == "tool-card" && e.Label == "Tool read_file" && e.State == "done"
			})
		})
		d.waitText(t, "the answer after the tool", "The readme greets the desktop.")
	})

	t.Run("an approval, clicked, with a notification while in the background", func(t *testing.T) {
		d.send(t, "Run the command [approve]")
		d.waitText(t, "the model's first words", "I will run it.")
		d.blur(t) // before the call comes, 3 s later
		p := d.waitFor(t, "the command waiting for approval", func(p probe) bool {
			return p.has(func(e element) bool { return e.Testid == "tool-card" && e.State == "approval" })
		})
		if _, err := os.Stat(filepath.Join(d.ws, "approved.txt")); err == nil {
			t.Fatal("the command ran before it was approved")
		}
		d.waitNotification(t, "Hearth is waiting for your approval", "run_shell_command")
		d.click(t, p, func(e element) bool { return e.Tag == "button" && e.Label == "Allow" })
		d.waitText(t, "the answer after the command", "The command has run.")
		b, err := os.ReadFile(filepath.Join(d.ws, "approved.txt"))
		if err != nil || strings.TrimSpace(string(b)) != "desktop-ok" {
			t.Fatalf("the approved command did not run in the workspace: %q, %v", b, err)
		}
	})

	t.Run("menu shortcuts: zoom and a new session", func(t *testing.T) {
		d.focus(t)
		d.key(t, "ctrl+equal")
		d.waitFor(t, "zoomed in", func(p probe) bool { return p.zoom() > 1.05 })
		d.key(t, "ctrl+0")
		d.waitFor(t, "zoom back to 100 %", func(p probe) bool { return math.Abs(p.zoom()-1) < 0.01 })
		d.key(t, "ctrl+n")
		d.waitFor(t, "a new session", func(p probe) bool { return p.Path == "/" && strings.Contains(p.Text, "What shall we work on?") })
	})

	t.Run("the folder dialog opens another workspace", func(t *testing.T) {
		other := filepath.Join(d.tmp, "chosen")
		if err := os.Mkdir(other, 0o755); err != nil {
			t.Fatal(err)
		}
		d.focus(t)
		d.key(t, "ctrl+o")
		dlg := d.waitWindow(t, "Open a folder as Hearth's workspace")
		d.xdo(t, "windowfocus", "--sync", dlg)
		d.xdo(t, "key", "ctrl+l")
		d.xdo(t, "type", "--delay", "15", other+"/")
		d.xdo(t, "key", "Return")
		d.waitFor(t, "the window on the chosen folder", func(p probe) bool {
			return p.has(func(e element) bool {
				return e.Testid == "workspace" && strings.HasPrefix(e.Label, "Workspace chosen:")
			})
		})
		d.focus(t)
		d.calibrate(t)
	})

	t.Run("an API key set in the settings is stored, not in the page", func(t *testing.T) {
		d.key(t, "ctrl+comma")
		p := d.waitFor(t, "the settings, with the key's field", func(p probe) bool {
			return p.has(func(e element) bool { return e.ID == "api-key" })
		})
		d.click(t, p, func(e element) bool { return e.ID == "api-key" })
		d.waitFor(t, "the key's field focused", func(p probe) bool {
			return p.has(func(e element) bool { return e.ID == "api-key" && e.Focused })
		})
		d.xdo(t, "type", "--delay", "15", "sk-desktop-secret")
		d.key(t, "Return")
		d.waitText(t, "the key stored", "Stored in")
		// No keychain in the test (HEARTH_NO_KEYRING): the file only the
		// user can read.
		b, err := os.ReadFile(filepath.Join(d.home, "secrets.toml"))
		if err != nil || !strings.Contains(string(b), "sk-desktop-secret") {
			t.Fatalf("the key is not stored: %q, %v", b, err)
		}
		// (The probe never reads a password field's value.)
		if strings.Contains(p.Text, "sk-desktop-secret") {
			t.Fatal("the key is shown in the page")
		}
		d.key(t, "Escape")
		d.waitFor(t, "the settings closed", func(p probe) bool { return !p.has(func(e element) bool { return e.ID == "api-key" }) })
	})

	if dir := os.Getenv("HEARTH_SCREENSHOTS"); dir != "" {
		d.send(t, "Say hello [think]")
		d.waitText(t, "the answer, for the screenshot", "Hello from the desktop window.")
		d.screenshot(t, filepath.Join(dir, "desktop-light.png"))
	}

	t.Run("a second launch focuses the first, and opens its folder", func(t *testing.T) {
		other := filepath.Join(d.tmp, "other-project")
		if err := os.Mkdir(other, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(d.bin, other)
		cmd.Env = d.env
		out, err := runBounded(cmd, time.Minute)
		if err != nil {
			t.Fatalf("the second launch: %v\n%s", err, out)
		}

		d.waitFor(t, "the first window on the other folder", func(p probe) bool {
			return p.has(func(e element) bool {
				return e.Testid == "workspace" && strings.HasPrefix(e.Label, "Workspace other-project")
			})
		})
		if n := len(d.windows(t)); n != 1 {
			t.Fatalf("%d windows named Hearth after a second launch, want 1", n)
		}
	})

	t.Run("quit during a turn asks, then keeps what was said", func(t *testing.T) {
		d.xdo(t, "windowsize", d.win, "900", "700")
		d.waitFor(t, "the window resized", func(p probe) bool { return p.Width == 900 })
		d.calibrate(t)
		d.send(t, "Write a long story [slow]")
		d.waitText(t, "the story's first words", "Once upon a time")
		d.focus(t)
		d.key(t, "ctrl+q")
		dlg := d.waitWindow(t, "Quit Hearth?")
		d.xdo(t, "windowfocus", "--sync", dlg)
		d.xdo(t, "key", "alt+n")
		d.waitGone(t, dlg)
		if d.exited() {
			t.Fatal("the app quit although the user answered No")
		}
		d.focus(t)
		d.key(t, "ctrl+q")
		dlg = d.waitWindow(t, "Quit Hearth?")
		d.xdo(t, "windowfocus", "--sync", dlg)
		d.xdo(t, "key", "alt+y")
		if err := d.wait(t, 30*time.Second); err != nil {
			t.Fatalf("the app did not end cleanly after quitting: %v\n%s", err, d.log())
		}
	})

	t.Run("the sessions are in the store, the stopped one kept", func(t *testing.T) {
		st, err := session.Open(context.Background(), filepath.Join(d.home, "hearth.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		list, err := st.List(context.Background(), session.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		var story []session.Message
		for _, s := range list {
			ms, err := st.Messages(context.Background(), s.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ms {
				all = append(all, string(m.Role)+": "+m.Content)
			}
			if len(ms) > 0 && strings.Contains(ms[0].Content, "[slow]") {
				story = ms
			}
		}
		joined := strings.Join(all, "\n")
		for _, want := range []string{"user: Say hello [think]", "assistant: Hello from the desktop window.", "assistant: The readme greets the desktop.", "assistant: The command has run."} {
			if !strings.Contains(joined, want) {
				t.Errorf("the store lacks %q; it has:\n%s", want, joined)
			}
		}
		if len(story) != 2 || !story[1].Partial || !strings.HasPrefix(story[1].Content, "Once upon a time") {
			t.Fatalf("the turn stopped by the quit is not kept whole (its prompt, and the partial reply): %+v", story)
		}
	})

	t.Run("the window comes back where it was", func(t *testing.T) {
		p, err := prefs.Load(prefs.File(d.home))
		if err != nil {
			t.Fatal(err)
		}
		if p.Width != 900 || p.Height != 700 {
			t.Fatalf("remembered %dx%d, want 900x700", p.Width, p.Height)
		}
		if p.Workspace != filepath.Join(d.tmp, "other-project") {
			t.Fatalf("remembered workspace %q, want the other project", p.Workspace)
		}
		d.start(t, "")
		d.waitFor(t, "the other project, open again", func(p probe) bool {
			return p.has(func(e element) bool {
				return e.Testid == "workspace" && strings.HasPrefix(e.Label, "Workspace other-project")
			})
		})
		w, h := d.geometry(t)
		if w != 900 || h < 700 {
			t.Fatalf("the window came back at %dx%d, want 900x700 (and the menu bar)", w, h)
		}
		d.stop(t)
	})

	t.Run("SIGTERM while a command waits for approval: stopped and kept, in the dark theme", func(t *testing.T) {
		d.start(t, d.ws, "GTK_THEME=Adwaita:dark")
		d.waitFor(t, "the dark theme (GTK's, followed by the page)", func(p probe) bool { return p.Theme == "dark" })
		d.calibrate(t)
		d.send(t, "Run the command again [approve]")
		d.waitFor(t, "the approval", func(p probe) bool {
			return p.has(func(e element) bool { return e.Testid == "tool-card" && e.State == "approval" })
		})
		if dir := os.Getenv("HEARTH_SCREENSHOTS"); dir != "" {
			d.screenshot(t, filepath.Join(dir, "desktop-dark.png"))
		}
		d.cmd.Process.Signal(syscall.SIGTERM)
		if err := d.wait(t, 30*time.Second); err != nil {
			t.Fatalf("the app did not end cleanly after SIGTERM: %v\n%s", err, d.log())
		}
		ms := sessionWith(t, d.home, "Run the command again [approve]")
		var said []string
		for _, m := range ms {
			said = append(said, fmt.Sprintf("%s %q partial=%v calls=%d", m.Role, m.Content, m.Partial, len(m.ToolCalls)))
		}
		if len(ms) < 2 || ms[1].Content != "I will run it." || len(ms[1].ToolCalls) != 1 {
			t.Fatalf("the stopped turn is not kept (the prompt, the reply with its call):\n%s", strings.Join(said, "\n"))
		}
		if _, err := os.Stat(filepath.Join(d.ws, "approved-again.txt")); err == nil {
			t.Fatal("the command ran, unapproved")
		}
	})

	t.Run("a folder never trusted: the window asks once, and the answer is kept", func(t *testing.T) {
		fresh := filepath.Join(d.tmp, "fresh")
		if err := os.Mkdir(fresh, 0o755); err != nil {
			t.Fatal(err)
		}
		d.start(t, fresh)
		d.waitText(t, "the trust question", "Do you trust this folder?", "Read-only", "Decide later")
		// The folder's level (Untrusted) has the focus: Up is Read-only.
		d.focus(t)
		d.key(t, "Up")
		p := d.waitFor(t, "the Save button", func(p probe) bool {
			return p.has(func(e element) bool { return e.Tag == "button" && e.Label == "Save" })
		})
		d.click(t, p, func(e element) bool { return e.Tag == "button" && e.Label == "Save" })
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, err := session.Open(context.Background(), filepath.Join(d.home, "hearth.db"))
			if err != nil {
				t.Fatal(err)
			}
			w, err := st.Workspace(context.Background(), fresh)
			st.Close()
			if err == nil && w.TrustChosen && w.Trust == session.TrustReadOnly {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the answer was not kept: %+v %v; the window shows:\n%s", w, err, d.waitFor(t, "anything", func(probe) bool { return true }).Text)
			}
			time.Sleep(200 * time.Millisecond)
		}
		d.waitFor(t, "the folder's trust, now read-only, in the header", func(p probe) bool {
			return p.has(func(e element) bool {
				return e.Testid == "workspace" && strings.Contains(e.Label, "the folder is read-only")
			})
		})
		d.stop(t)
	})
}

// deskModel answers as the marker in the last prompt says.
func deskModel(r llmtest.Request) llmtest.Scenario {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil {
		return llmtest.OllamaError(400, "deskModel: the request is not JSON: "+err.Error())
	}
	prompt, answered := "", false
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			prompt, answered = m.Content, false
		case "tool":
			answered = true
		}
	}
	m := req.Model
	pause := llmtest.Pause(1500 * time.Millisecond)
	switch {
	case !req.Stream:
		return llmtest.OllamaWhole(m, llmtest.Text("Desktop chat"))
	case strings.Contains(prompt, "[think]"):
		return llmtest.OllamaStream(m, llmtest.Thinking("Weighing how to greet "), pause, llmtest.Thinking("someone at a window."),
			llmtest.Text("Hello from"), pause, llmtest.Text(" the desktop window."), llmtest.Usage(40, 8))
	case strings.Contains(prompt, "[tool]") && !answered:
		return llmtest.OllamaStream(m, llmtest.Call("read_file", `{"file_path":"README.md"}`))
	case strings.Contains(prompt, "[tool]"):
		return llmtest.OllamaStream(m, llmtest.Text("The readme greets the desktop."))
	case strings.Contains(prompt, "again [approve]") && !answered:
		return llmtest.OllamaStream(m, llmtest.Text("I will run it."), llmtest.Call("run_shell_command", `{"command":"echo again > approved-again.txt"}`))
	case strings.Contains(prompt, "[approve]") && !answered:
		return llmtest.OllamaStream(m, llmtest.Text("I will run it."), llmtest.Pause(3*time.Second),
			llmtest.Call("run_shell_command", `{"command":"echo desktop-ok > approved.txt"}`))
	case strings.Contains(prompt, "[approve]"):
		return llmtest.OllamaStream(m, llmtest.Text("The command has run."))
	case strings.Contains(prompt, "[slow]"):
		return llmtest.OllamaStream(m, llmtest.Text("Once upon a time"), llmtest.Pause(10*time.Minute), llmtest.Text(" the end."))
	}
	return llmtest.OllamaStream(m, llmtest.Text("I was not told what to do."))
}

// buildApp builds the app with the build tags Wails needs.
func buildApp(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hearth-desktop")
	cmd := exec.Command("go", "build", "-tags", "desktop,production,webkit2_41,hearthprobe", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the app: %v\n%s", err, out)
	}
	return bin
}

// desk is the test's desktop: an X server, a session bus with a
// notification service, the fake model server, and the app.
type desk struct {
	bin, tmp, home, ws, probeAt string
	env                         []string
	srv                         *llmtest.Server
	notes                       *notifications

	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan error
	win    string
	offX   int
	offY   int
	ended  bool
	endErr error
}

func newDesk(t *testing.T, bin string) *desk {
	t.Helper()
	tmp := t.TempDir()
	d := &desk{bin: bin, tmp: tmp, home: filepath.Join(tmp, "home"), ws: filepath.Join(tmp, "project"), probeAt: filepath.Join(tmp, "probe.json")}
	for _, dir := range []string{d.home, d.ws} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d.ws, "README.md"), []byte("# Project\nHello, desktop.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The folders the test opens have had their trust chosen (untrusted,
	// the default): the page's question about a folder never trusted
	// would otherwise stand over the window.
	st, err := session.Open(context.Background(), filepath.Join(d.home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{d.ws, filepath.Join(tmp, "chosen"), filepath.Join(tmp, "other-project")} {
		if _, err := st.AddWorkspace(context.Background(), session.Workspace{Path: ws, Trust: session.TrustUntrusted}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	display := startXvfb(t)
	bus := startBus(t)
	d.notes = serveNotifications(t, bus)
	d.srv = llmtest.New(t)
	d.srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 32768})
	d.env = append(os.Environ(),
		"DISPLAY="+display,
		"DBUS_SESSION_BUS_ADDRESS="+bus,
		"HOME="+d.home,
		"HEARTH_HOME="+d.home,
		"HEARTH_NO_KEYRING=1",
		"HEARTH_DESKTOP_PROBE="+d.probeAt,
		"OLLAMA_HOST="+d.srv.OllamaURL(),
		"HEARTH_MODEL=m",
		"HEARTH_PROVIDER=",
		"OPENAI_BASE_URL=",
		"NO_AT_BRIDGE=1",
		"LIBGL_ALWAYS_SOFTWARE=1",
	)
	t.Cleanup(func() {
		if d.cmd != nil && !d.ended {
			d.cmd.Process.Kill()
			<-d.done
		}
		if t.Failed() {
			t.Logf("the app's output:\n%s", d.log())
		}
	})
	return d
}

// start launches the app (on ws, or the remembered folder when "") and
// waits for its window and its page.
func (d *desk) start(t *testing.T, ws string, env ...string) {
	t.Helper()
	os.Remove(d.probeAt)
	var args []string
	if ws != "" {
		args = append(args, ws)
	}
	d.cmd = exec.Command(d.bin, args...)
	d.cmd.Env = append(append([]string{}, d.env...), env...)
	d.out = &syncBuffer{}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.done = make(chan error, 1)
	d.ended = false
	go func() { d.done <- d.cmd.Wait() }()
	d.waitFor(t, "the page", func(p probe) bool { return p.Path != "" })
	ws2 := d.windows(t)
	if len(ws2) == 0 {
		t.Fatal("no window named Hearth")
	}
	d.win = ws2[0]
	d.focus(t)
}

// stop quits the app with SIGTERM and waits for it.
func (d *desk) stop(t *testing.T) {
	t.Helper()
	d.cmd.Process.Signal(os.Interrupt)
	if err := d.wait(t, 30*time.Second); err != nil {
		t.Fatalf("the app did not end after SIGINT: %v\n%s", err, d.log())
	}
}

// wait waits for the app to end, up to limit.
func (d *desk) wait(t *testing.T, limit time.Duration) error {
	t.Helper()
	select {
	case err := <-d.done:
		d.ended, d.endErr = true, err
		return err
	case <-time.After(limit):
		// SIGQUIT: Go prints every goroutine's stack, for the log.
		d.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			d.cmd.Process.Kill()
			<-d.done
		}
		d.ended = true
		return fmt.Errorf("still running after %v (stopped with SIGQUIT)", limit)
	}
}

// exited reports whether the app has ended.
func (d *desk) exited() bool {
	select {
	case err := <-d.done:
		d.ended, d.endErr = true, err
		return true
	default:
		return d.ended
	}
}

func (d *desk) log() string {
	if d.out == nil {
		return ""
	}
	return d.out.String()
}

// probe is what the page reports of itself (probe.go).
type probe struct {
	Text     string    `json:"text"`
	Theme    string    `json:"theme"`
	Zoom     string    `json:"zoom"`
	Focus    bool      `json:"focus"`
	Path     string    `json:"path"`
	Width    int       `json:"width"`
	Height   int       `json:"height"`
	Mouse    *point    `json:"mouse"`
	Elements []element `json:"elements"`
}

type point struct{ X, Y float64 }

type element struct {
	Tag, ID, Label, Value, Testid, State string
	X, Y, W, H                           float64
	Disabled, Focused                    bool
}

func (p probe) has(match func(element) bool) bool {
	for _, e := range p.Elements {
		if match(e) {
			return true
		}
	}
	return false
}

func (p probe) zoom() float64 {
	z, err := strconv.ParseFloat(p.Zoom, 64)
	if err != nil {
		return 0
	}
	return z
}

// waitFor reads the probe until ok, or fails after a minute (a hang).
func (d *desk) waitFor(t *testing.T, what string, ok func(probe) bool) probe {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last probe
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(d.probeAt); err == nil {
			var p probe
			if json.Unmarshal(b, &p) == nil {
				last = p
				if ok(p) {
					return p
				}
			}
		}
		if d.exited() {
			t.Fatalf("waiting for %s: the app ended: %v\n%s", what, d.endErr, d.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var els []string
	for _, e := range last.Elements {
		if e.Testid != "" || e.Tag == "button" {
			els = append(els, fmt.Sprintf("%+v", e))
		}
	}
	t.Fatalf("waiting for %s: not seen in the window within a minute; the window shows:\n%s\nits controls:\n%s", what, last.Text, strings.Join(els, "\n"))
	return last
}

// waitText waits until the window shows every piece of text.
func (d *desk) waitText(t *testing.T, what string, texts ...string) probe {
	t.Helper()
	return d.waitFor(t, what, func(p probe) bool {
		for _, s := range texts {
			if !strings.Contains(p.Text, s) {
				return false
			}
		}
		return true
	})
}

// calibrate learns where the page is in the window (below the menu bar):
// the pointer is moved to a point of the window and the page says where it
// saw it.
func (d *desk) calibrate(t *testing.T) {
	t.Helper()
	for _, at := range [][2]int{{300, 300}, {310, 305}} {
		d.xdo(t, "mousemove", "--window", d.win, strconv.Itoa(at[0]), strconv.Itoa(at[1]))
		p := d.waitFor(t, "the pointer seen by the page", func(p probe) bool {
			return p.Mouse != nil && math.Abs(p.Mouse.X-float64(at[0])) < 200 && int(p.Mouse.X) != 0 && int(p.Mouse.Y) < at[1]+1 && int(p.Mouse.Y) > at[1]-200 && int(p.Mouse.X)+int(p.Mouse.Y) != 0 && moved(p, at)
		})
		d.offX, d.offY = at[0]-int(p.Mouse.X), at[1]-int(p.Mouse.Y)
	}
}

// moved reports whether the page saw the pointer at a place consistent
// with at (the offset is the menu bar's, a few dozen pixels at most).
func moved(p probe, at [2]int) bool {
	dx, dy := at[0]-int(p.Mouse.X), at[1]-int(p.Mouse.Y)
	return dx >= 0 && dx < 10 && dy >= 0 && dy < 80
}

// click clicks the centre of the first element that matches.
func (d *desk) click(t *testing.T, p probe, match func(element) bool) {
	t.Helper()
	for _, e := range p.Elements {
		if match(e) {
			x, y := int(e.X+e.W/2)+d.offX, int(e.Y+e.H/2)+d.offY
			d.xdo(t, "mousemove", "--window", d.win, strconv.Itoa(x), strconv.Itoa(y))
			d.xdo(t, "click", "1")
			return
		}
	}
	t.Fatalf("nothing to click in the window; it shows:\n%s", p.Text)
}

// send types a message into the message box and sends it with Enter.
func (d *desk) send(t *testing.T, text string) {
	t.Helper()
	p := d.waitFor(t, "the message box, ready", func(p probe) bool {
		return p.has(func(e element) bool { return e.Tag == "textarea" && !e.Disabled }) &&
			!p.has(func(e element) bool { return e.Tag == "button" && e.Label == "Stop" })
	})
	d.click(t, p, func(e element) bool { return e.Tag == "textarea" })
	d.waitFor(t, "the message box focused", func(p probe) bool {
		return p.has(func(e element) bool { return e.Tag == "textarea" && e.Focused })
	})
	d.xdo(t, "type", "--delay", "15", text)
	d.waitFor(t, "the message typed", func(p probe) bool {
		return p.has(func(e element) bool { return e.Tag == "textarea" && e.Value == text })
	})
	d.key(t, "Return")
}

// key sends a key to the window (which has the focus).
func (d *desk) key(t *testing.T, k string) {
	t.Helper()
	d.xdo(t, "key", "--clearmodifiers", k)
}

// focus gives the window the keyboard focus.
func (d *desk) focus(t *testing.T) {
	t.Helper()
	d.xdo(t, "windowfocus", "--sync", d.win)
	d.waitFor(t, "the window focused", func(p probe) bool { return p.Focus })
}

// blur takes the focus from the window (to the root window, as when
// another application is in front), with the pointer outside it.
func (d *desk) blur(t *testing.T) {
	t.Helper()
	d.xdo(t, "mousemove", "1399", "999")
	root := strings.TrimSpace(d.xdo(t, "search", "--maxdepth", "0", "--name", ""))
	if root == "" {
		t.Fatal("no root window")
	}
	d.xdo(t, "windowfocus", strings.Fields(root)[0])
	d.waitFor(t, "the window in the background", func(p probe) bool { return !p.Focus })
}

// windows are the X windows named Hearth.
func (d *desk) windows(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^Hearth$")
	cmd.Env = d.env
	out, _ := cmd.Output()
	return strings.Fields(string(out))
}

// waitWindow waits for a window with this exact name.
func (d *desk) waitWindow(t *testing.T, name string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		cmd := exec.Command("xdotool", "search", "--onlyvisible", "--name", "^"+regexp.QuoteMeta(name)+"$")
		cmd.Env = d.env
		if out, _ := cmd.Output(); len(strings.Fields(string(out))) > 0 {
			return strings.Fields(string(out))[0]
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no window %q within a minute", name)
	return ""
}

// waitGone waits for a window to go.
func (d *desk) waitGone(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		cmd := exec.Command("xdotool", "getwindowname", id)
		cmd.Env = d.env
		if cmd.Run() != nil {
			return
		}
		cmd = exec.Command("xdotool", "search", "--onlyvisible", "--name", ".")
		cmd.Env = d.env
		out, _ := cmd.Output()
		if !strings.Contains(" "+strings.Join(strings.Fields(string(out)), " ")+" ", " "+id+" ") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("window %s is still there after a minute", id)
}

// geometry is the window's size.
func (d *desk) geometry(t *testing.T) (int, int) {
	t.Helper()
	out := d.xdo(t, "getwindowgeometry", "--shell", d.win)
	var w, h int
	for _, l := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(l, "WIDTH="); ok {
			w, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(l, "HEIGHT="); ok {
			h, _ = strconv.Atoi(v)
		}
	}
	return w, h
}

// screenshot saves the window as a PNG (ImageMagick's import).
func (d *desk) screenshot(t *testing.T, path string) {
	t.Helper()
	time.Sleep(500 * time.Millisecond) // the last frame painted
	cmd := exec.Command("import", "-window", d.win, path)
	cmd.Env = d.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
}

// xdo runs xdotool on the test's display.
func (d *desk) xdo(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("xdotool", args...)
	cmd.Env = d.env
	out, err := runBounded(cmd, 30*time.Second)
	if err != nil {
		t.Fatalf("xdotool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runBounded runs cmd, killing it after limit (a hang).
func runBounded(cmd *exec.Cmd, limit time.Duration) ([]byte, error) {
	var buf syncBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return []byte(buf.String()), err
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		return []byte(buf.String()), fmt.Errorf("killed after %v", limit)
	}
}

// startXvfb starts an X server of the test's own and returns its display.
func startXvfb(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1400x1000x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Xvfb: %v", err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := readLine(r, 30*time.Second)
	if err != nil {
		t.Fatalf("Xvfb did not say its display: %v", err)
	}
	return ":" + strings.TrimSpace(line)
}

// startBus starts a session bus of the test's own and returns its address.
func startBus(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dbus-daemon: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := readLine(out, 30*time.Second)
	if err != nil {
		t.Fatalf("dbus-daemon did not say its address: %v", err)
	}
	return strings.TrimSpace(line)
}

func readLine(r interface{ Read([]byte) (int, error) }, limit time.Duration) (string, error) {
	got := make(chan string, 1)
	fail := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		if err != nil {
			fail <- err
			return
		}
		got <- line
	}()
	select {
	case l := <-got:
		return l, nil
	case err := <-fail:
		return "", err
	case <-time.After(limit):
		return "", fmt.Errorf("nothing within %v", limit)
	}
}

// notifications is a notification service on the test's bus, recording
// what it is asked to show.
type notifications struct {
	mu   sync.Mutex
	seen []string
}

// Notify is org.freedesktop.Notifications.Notify.
func (n *notifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen = append(n.seen, app+"|"+summary+"|"+body)
	return uint32(len(n.seen)), nil
}

func serveNotifications(t *testing.T, addr string) *notifications {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connecting to the test's bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	n := &notifications{}
	if err := conn.Export(n, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning the notification service's name: %v (reply %v)", err, reply)
	}
	return n
}

// waitNotification waits for a notification with this title whose body
// holds body.
func (d *desk) waitNotification(t *testing.T, title, body string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		d.notes.mu.Lock()
		for _, s := range d.notes.seen {
			parts := strings.SplitN(s, "|", 3)
			if len(parts) == 3 && parts[1] == title && strings.Contains(parts[2], body) {
				d.notes.mu.Unlock()
				return
			}
		}
		d.notes.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
	d.notes.mu.Lock()
	defer d.notes.mu.Unlock()
	t.Fatalf("no notification %q about %q within a minute; seen: %q", title, body, d.notes.seen)
}

// syncBuffer is a buffer safe for concurrent writes and reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// listening lists the TCP and UDP sockets in a listening state that pid or
// its descendants (the web view's processes) hold.
func listening(t *testing.T, pid int) []string {
	t.Helper()
	inodes := map[string]bool{}
	for _, p := range tree(pid) {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p))
		for _, fd := range fds {
			l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", p, fd.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") {
				inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
			}
		}
	}
	var found []string
	for _, table := range []string{"tcp", "tcp6", "udp", "udp6"} {
		b, err := os.ReadFile("/proc/net/" + table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// st 0A is LISTEN (tcp); an unconnected udp socket (07) receives.
			if len(f) > 9 && inodes[f[9]] && (f[3] == "0A" || strings.HasPrefix(table, "udp") && f[3] == "07") {
				found = append(found, table+" "+f[1])
			}
		}
	}
	return found
}

// tree is pid and its descendants.
func tree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		// Each thread's children: the web view starts its processes
		// from threads of its own.
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", out[i]))
		for _, task := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", out[i], task.Name()))
			if err != nil {
				continue
			}
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// sessionWith returns the messages of the stored session whose first
// prompt is prompt.
func sessionWith(t *testing.T, home, prompt string) []session.Message {
	t.Helper()
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	list, err := st.List(ctx, session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		ms, err := st.Messages(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 0 && ms[0].Content == prompt {
			return ms
		}
	}
	t.Fatalf("no stored session starts with %q", prompt)
	return nil
}
