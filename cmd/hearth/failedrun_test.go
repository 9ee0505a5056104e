package main

import (
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// TestFailedRunIsKeptAndRetried: a run that cannot reach the server keeps
// the message in a titled session with the failure recorded, says so with
// the command that runs it again, and that command answers it, once the
// server is up, without sending the model the failure or the message twice.
func TestFailedRunIsKeptAndRetried(t *testing.T) {
	r := newRunEnv(t)
	// An address nothing listens on: a listener's, closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	home := r.env["HEARTH_HOME"]
	ids := regexp.MustCompile(`s-[a-z0-9]{10}`)
	stamps := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?`)
	tr := newTranscript(r.ws, "WORKSPACE", r.srv.URL, "http://OLLAMA", dead, "127.0.0.1:DEAD")
	step := func(env map[string]string, args ...string) (int, string, string) {
		t.Helper()
		env["HEARTH_HOME"] = home
		code, out, errOut := runHearth(t, env, args...)
		var vars []string
		if v := env["OLLAMA_HOST"]; v != "" {
			vars = append(vars, "OLLAMA_HOST="+v)
		}
		// The id and times change from run to run: fixed stand-ins of the
		// same width keep the columns of a list aligned.
		norm := func(s string) string {
			s = ids.ReplaceAllString(s, "s-xxxxxxxxxx")
			return stamps.ReplaceAllStringFunc(s, func(d string) string { return "YYYY-MM-DD hh:mm:ss"[:len(d)] })
		}
		shown := make([]string, len(args))
		for i, a := range args {
			shown[i] = norm(a)
		}
		tr.addEnv(vars, shown, code, norm(out), norm(errOut))
		return code, out, errOut
	}

	code, _, errOut := step(map[string]string{"OLLAMA_HOST": dead}, "-m", "m", "-w", r.ws, "run", "why does the build fail?")
	id := ids.FindString(errOut)
	wantRerun := "to run it again: hearth run --context " + id + " --model m --workspace " + r.ws + "\n"
	if code != exitFailed || id == "" || !strings.Contains(errOut, "is Ollama running?") || !strings.HasSuffix(errOut, wantRerun) {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	st := r.store(t)
	s, err := st.Get(context.Background(), id)
	msgs, _ := st.Messages(context.Background(), id)
	if err != nil || s.Title != "why does the build fail" || len(msgs) != 2 || msgs[0].Content != "why does the build fail?" ||
		!msgs[1].Failure || !strings.HasPrefix(msgs[1].Content, "Provider request failed: ollama chat: cannot reach") {
		t.Fatalf("stored %+v %v\n%+v", s, err, msgs)
	}
	step(map[string]string{}, "sessions", "list")
	step(map[string]string{}, "sessions", "show", id)

	// The server is up: the command it printed answers the same message.
	r.srv.Enqueue("/api/chat", reply(llmtest.Text("A missing import in main.go.")))
	rerun := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(wantRerun, "to run it again: hearth "), "\n"))
	code, out, errOut := step(map[string]string{"OLLAMA_HOST": r.srv.URL}, rerun...)
	if code != 0 || out != "A missing import in main.go.\n" || errOut != "" {
		t.Fatalf("rerun: exit %d %q %q", code, out, errOut)
	}
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	reqs := r.srv.RequestsTo("/api/chat")
	reqs[0].JSON(t, &body)
	if n := len(body.Messages); n != 2 || body.Messages[1].Role != "user" || body.Messages[1].Content != "why does the build fail?" {
		t.Errorf("the rerun sent %+v", body.Messages)
	}
	step(map[string]string{}, "sessions", "show", id)
	// Nothing more to run again: a usage error.
	if code, _, errOut := step(map[string]string{"OLLAMA_HOST": r.srv.URL}, rerun...); code != exitUsage || !strings.Contains(errOut, "has no unanswered message to run again") {
		t.Errorf("second rerun: exit %d %q", code, errOut)
	}
	golden(t, "failed-run", tr.String())
}

func (r *runEnv) store(t *testing.T) *session.SQLite {
	st, err := session.Open(context.Background(), filepath.Join(r.env["HEARTH_HOME"], "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
