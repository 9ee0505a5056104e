package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// served is a running `hearth serve`.
type served struct {
	t     *testing.T
	cmd   *exec.Cmd
	base  string
	token string
	out   []string
	done  chan error
}

// serve starts hearth serve on a free port and waits for the address it
// prints.
func (e *e2e) serve(env []string, args ...string) *served {
	e.t.Helper()
	life := 60 * time.Second
	if e.serveFor > 0 {
		life = e.serveFor
	}
	ctx, cancel := context.WithTimeout(context.Background(), life)
	e.t.Cleanup(cancel)
	cmd := e.cmd(ctx, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	s := &served{t: e.t, cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		line := lines.Text()
		s.out = append(s.out, line)
		if strings.Contains(line, "/?token=") {
			u, err := url.Parse(strings.TrimSpace(line))
			if err != nil {
				e.t.Fatal(err)
			}
			s.token = u.Query().Get("token")
			s.base = u.Scheme + "://" + u.Host
			break
		}
	}
	go func() {
		io.Copy(io.Discard, stdout)
		s.done <- cmd.Wait()
	}()
	if s.base == "" {
		cmd.Process.Kill()
		<-s.done
		e.t.Fatalf("no address printed:\n%s\n%s", strings.Join(s.out, "\n"), stderr.String())
	}
	e.t.Cleanup(func() { s.stop() })
	return s
}

// stop sends Ctrl-C and returns the exit code (-1 if it had to be killed).
func (s *served) stop() int {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.done:
		case <-time.After(60 * time.Second): // a hang detector only
			s.cmd.Process.Kill()
			<-s.done
			return -1
		}
	}
	return s.cmd.ProcessState.ExitCode()
}

func (s *served) call(method, path, token, body string) (int, string) {
	s.t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

func TestE2EServe(t *testing.T) {
	e := newE2E(t)
	s := e.serve(nil)
	if !strings.HasPrefix(s.base, "http://127.0.0.1:") || len(s.token) < 40 {
		t.Fatalf("printed %q", s.out)
	}
	// The token was stored with the config, for the user only.
	path := filepath.Join(e.home, "api-token")
	data, err := os.ReadFile(path)
	if err != nil || strings.TrimSpace(string(data)) != s.token {
		t.Fatalf("token file: %q %v", data, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v", fi.Mode().Perm())
	}
	if code, _ := s.call("GET", "/v1/sessions", "", ""); code != 401 {
		t.Errorf("no token: %d", code)
	}
	if code, body := s.call("GET", "/", "", ""); code != 200 || !strings.Contains(body, "Hearth") {
		t.Errorf("web UI: %d %s", code, body)
	}
	code, body := s.call("GET", "/v1/health", s.token, "")
	if code != 200 || !strings.Contains(body, `"status":"ok"`) || !strings.Contains(body, `"tools":["read_file"`) {
		t.Errorf("health: %d %s", code, body)
	}

	// A turn over SSE, stored where `hearth sessions` finds it.
	code, body = s.call("POST", "/v1/sessions", s.token, "")
	var se struct{ ID string }
	json.Unmarshal([]byte(body), &se)
	if code != 201 || se.ID == "" {
		t.Fatalf("create: %d %s", code, body)
	}
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Text("Hello from the API.")))
	code, body = s.call("POST", "/v1/sessions/"+se.ID+"/turns", s.token, `{"message":"say hello"}`)
	if code != 200 || !strings.Contains(body, `data: {"type":"done","reason":"stop","text":"Hello from the API."}`) {
		t.Fatalf("turn: %d\n%s", code, body)
	}
	st := e.store()
	got, err := st.Get(context.Background(), se.ID)
	if err != nil || got.Title != "say hello" {
		t.Errorf("stored session %+v %v", got, err)
	}

	// A second start reuses the token.
	s2 := e.serve(nil)
	if s2.token != s.token {
		t.Error("the token changed between starts")
	}
}

func TestE2EServeTokenFromEnvAndStop(t *testing.T) {
	e := newE2E(t)
	const token = "a-token-from-the-environment-123"
	s := e.serve([]string{"HEARTH_API_TOKEN=" + token}, "--allow-host", "hearth.lan")
	if s.token != token {
		t.Fatalf("printed token %q", s.token)
	}
	if code, _ := s.call("GET", "/v1/sessions", token, ""); code != 200 {
		t.Errorf("env token: %d", code)
	}
	if _, err := os.Stat(filepath.Join(e.home, "api-token")); !os.IsNotExist(err) {
		t.Errorf("a token file was made: %v", err)
	}
	// The Host check takes the allowed name.
	req, _ := http.NewRequest("GET", s.base+"/v1/sessions", nil)
	req.Host = "hearth.lan:" + strings.TrimPrefix(s.base, "http://127.0.0.1:")
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("allowed host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Ctrl-C stops it cleanly, while a turn runs.
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("partial"), llmtest.Pause(time.Hour), llmtest.Text(" never")))
	_, body := s.call("POST", "/v1/sessions", token, "")
	var se struct{ ID string }
	json.Unmarshal([]byte(body), &se)
	req, _ = http.NewRequest("POST", s.base+"/v1/sessions/"+se.ID+"/turns", strings.NewReader(`{"message":"go"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"text_delta"`) {
			break
		}
	}
	if code := s.stop(); code != 0 {
		t.Errorf("exit code %d after Ctrl-C", code)
	}
	rest, _ := io.ReadAll(events)
	if !strings.Contains(string(rest), `"reason":"cancelled"`) {
		t.Errorf("the stream ended with:\n%s", rest)
	}
	msgs, err := e.store().Messages(context.Background(), se.ID)
	if err != nil || len(msgs) != 2 || msgs[1].Content != "partial" {
		t.Errorf("stored %+v %v", msgs, err)
	}
}

func TestE2EServeUsageErrors(t *testing.T) {
	e := newE2E(t)
	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"short env token", []string{"HEARTH_API_TOKEN=short"}, nil, "shorter than 16"},
		{"bad approval mode", nil, []string{"--approval-mode", "careful"}, "unknown approval mode"},
		{"bad origin", nil, []string{"--allow-origin", "localhost:5173"}, "scheme and host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := e.cmd(ctx, "", append([]string{"serve", "--addr", "127.0.0.1:0"}, tt.args...)...)
			cmd.Env = append(cmd.Env, tt.env...)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != exitUsage || !strings.Contains(string(out), tt.want) {
				t.Errorf("exit %d\n%s", cmd.ProcessState.ExitCode(), out)
			}
		})
	}
}
