package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// streamWait bounds the wait for the next event of a stream: a hang
// detector only (a loaded machine is slow, never this slow).
const streamWait = 60 * time.Second

// TestE2ESharedStore runs three `hearth serve` processes on one PostgreSQL
// database (HEARTH_DATABASE_URL) and drives them through real HTTP:
//
//   - a turn started on the first is followed live on the second and
//     resumed on the third from an event in its middle, event for event
//     the same (ids and data); the second refuses another turn in the
//     session, naming the first as its holder;
//   - a turn of the first is cancelled through the third; its partial
//     reply is stored;
//   - the approvals of a turn of the first are answered through the
//     second (allow: the file is written, and only then) and the third
//     (deny: it is not);
//   - the first is killed (SIGKILL) mid-turn: the stream followed through
//     the second ends with an error and done (reason error); the session
//     keeps the user's message, and the third continues it; `hearth
//     sessions` shows it.
//
// The three share HEARTH_HOME (so the API token, and the config that
// offers write_file) and a scripted model (sharedModel), which answers by
// what the prompt asks, whichever instance asks.
func TestE2ESharedStore(t *testing.T) {
	e := newE2E(t) // skips under -short before PostgreSQL is started
	dbURL := pgtest.URL(t)
	e.serveFor = 10 * time.Minute // a hang detector: the test ends them
	cfg := "[profiles.api]\ntools = [\"read_file\", \"write_file\", \"list_directory\"]\napproval_mode = \"default\"\n"
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	model := newSharedModel(t, e.srv)
	env := []string{"HEARTH_DATABASE_URL=" + dbURL, "OLLAMA_HOST=" + model.url}
	var inst []*served
	for i := range 3 {
		// One after the other: the first makes the token the others read.
		s := e.serve(env)
		if i > 0 && s.token != inst[0].token {
			t.Fatalf("instance %d has another token", i+1)
		}
		if out := strings.Join(s.out, "\n"); !strings.Contains(out, "write_file") {
			t.Fatalf("write_file is not among the served tools:\n%s", out)
		}
		inst = append(inst, s)
	}
	one, two, three := inst[0], inst[1], inst[2]
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	holder := func(s *served) string { return fmt.Sprintf("hearth on %s (pid %d)", host, s.cmd.Process.Pid) }

	t.Log("a turn on 1, followed on 2, resumed on 3")
	id := newSession(t, one)
	own := startTurn(t, one, id, "[gated] count to ten")
	var first []sseFrame
	for text := ""; text != gatedBefore; {
		fr := own.next()
		first = append(first, fr)
		if fr.Type == "text_delta" {
			text += fr.str("text")
		}
		if fr.Type == "done" {
			t.Fatalf("the turn ended before its gate: %v", datas(first))
		}
	}
	turnID := own.resp.Header.Get("Hearth-Turn-Id")
	viaTwo := follow(t, two, id, "")
	code, errCode, msg := apiError(two.call("POST", "/v1/sessions/"+id+"/turns", two.token, `{"message":"again"}`))
	if code != http.StatusConflict || errCode != "session_busy" || !strings.Contains(msg, holder(one)) || !strings.Contains(msg, turnID) {
		t.Errorf("a second turn on 2: %d %s %q, want 409 session_busy naming %s and turn %s", code, errCode, msg, holder(one), turnID)
	}
	detail := getSession(t, three, id)
	if detail.RunningTurn != turnID {
		t.Errorf("3 says the running turn is %q, want %q", detail.RunningTurn, turnID)
	}
	// 3 resumes after an event in the middle of what was sent so far,
	// once 2 has had it all: then it is in the store (the relay publishes
	// events in the transaction that writes them). Sooner, it might not
	// be: see TestE2ESharedStoreResumeAtOnce.
	if got := viaTwo.take(len(first)); !slices.Equal(datas(got), datas(first)) {
		t.Fatalf("2 streamed\n%s\n1 streamed\n%s", strings.Join(datas(got), "\n"), strings.Join(datas(first), "\n"))
	}
	mid := len(first) / 2
	viaThree := follow(t, three, id, first[mid].ID)
	model.open()
	all := append(first, own.rest()...)
	last := all[len(all)-1]
	if last.Type != "done" || last.str("reason") != "stop" || last.str("text") != gatedBefore+gatedAfter {
		t.Fatalf("1's stream ends with %s", last.Data)
	}
	viaTwo.rest()
	if got := viaTwo.all; !slices.Equal(datas(got), datas(all)) {
		t.Errorf("2 streamed\n%s\n1 streamed\n%s", strings.Join(datas(got), "\n"), strings.Join(datas(all), "\n"))
	}
	if got := viaThree.rest(); !slices.Equal(datas(got), datas(all[mid+1:])) {
		t.Errorf("3, from %s, streamed\n%s\nwant\n%s", first[mid].ID, strings.Join(datas(got), "\n"), strings.Join(datas(all[mid+1:]), "\n"))
	}
	detail = getSession(t, two, id)
	if n := len(detail.Messages); n != 2 || detail.Messages[1].Content != gatedBefore+gatedAfter || detail.RunningTurn != "" {
		t.Fatalf("2 shows the session as %+v", detail)
	}

	t.Log("a turn on 1 cancelled through 3")
	own = startTurn(t, one, id, "[hang] go on")
	own.until("text_delta")
	viaTwo = follow(t, two, id, "")
	viaTwo.until("text_delta")
	var cancelled struct {
		TurnID   string `json:"turn_id"`
		Finished bool   `json:"finished"`
		Reason   string `json:"reason"`
	}
	if code, body := three.call("POST", "/v1/sessions/"+id+"/cancel", three.token, ""); code != http.StatusOK || json.Unmarshal([]byte(body), &cancelled) != nil {
		t.Errorf("cancel through 3: %d %s", code, body)
	}
	if !cancelled.Finished || cancelled.Reason != "cancelled" || cancelled.TurnID != own.resp.Header.Get("Hearth-Turn-Id") {
		t.Errorf("cancel through 3: %+v, want turn %s finished, cancelled", cancelled, own.resp.Header.Get("Hearth-Turn-Id"))
	}
	for name, st := range map[string]*sseStream{"1": own, "2": viaTwo} {
		if frs := st.rest(); len(frs) == 0 || frs[len(frs)-1].Type != "done" || frs[len(frs)-1].str("reason") != "cancelled" {
			t.Errorf("%s's stream ends with %v", name, datas(frs))
		}
	}
	detail = getSession(t, two, id)
	if n := len(detail.Messages); n != 4 || detail.Messages[3].Role != "assistant" || !detail.Messages[3].Partial || detail.Messages[3].Content != hangBefore {
		t.Errorf("after the cancel, 2 shows %+v", detail.Messages)
	}

	t.Log("approvals of a turn on 1: allowed through 2, denied through 3")
	id = newSession(t, one)
	own = startTurn(t, one, id, "[write] two files")
	viaTwo = follow(t, two, id, "")
	ask := viaTwo.until("approval_required")
	call := ask[len(ask)-1]
	if call.str("name") != "write_file" {
		t.Fatalf("the approval asked for: %s", call.Data)
	}
	allowed, denied := filepath.Join(e.ws, "allowed.txt"), filepath.Join(e.ws, "denied.txt")
	if _, err := os.Stat(allowed); err == nil {
		t.Fatal("allowed.txt was written before the approval")
	}
	var answer map[string]string
	if code, body := two.call("POST", "/v1/approvals/"+call.str("id"), two.token, `{"decision":"allow"}`); code != http.StatusOK || json.Unmarshal([]byte(body), &answer) != nil {
		t.Fatalf("allow through 2: %d %s", code, body)
	}
	if answer["session_id"] != id || answer["decision"] != "allow" || answer["turn_id"] != own.resp.Header.Get("Hearth-Turn-Id") {
		t.Errorf("allow through 2 answered %v", answer)
	}
	ask = viaTwo.until("approval_required")
	call2 := ask[len(ask)-1]
	if data, err := os.ReadFile(allowed); err != nil || string(data) != "allowed\n" {
		t.Errorf("after the allow (and its result): allowed.txt holds %q (%v)", data, err)
	}
	if code, body := three.call("POST", "/v1/approvals/"+call2.str("id"), three.token, `{"decision":"deny","message":"not that one"}`); code != http.StatusOK {
		t.Fatalf("deny through 3: %d %s", code, body)
	}
	frs := append(ask, viaTwo.rest()...)
	if last := frs[len(frs)-1]; last.Type != "done" || last.str("text") != "Wrote one; the other was denied." {
		t.Errorf("2's stream ends with %s", last.Data)
	}
	if ownFrs := own.rest(); !slices.Equal(datas(ownFrs), datas(viaTwo.all)) {
		t.Errorf("1 and 2 streamed different events:\n%s\n---\n%s", strings.Join(datas(ownFrs), "\n"), strings.Join(datas(viaTwo.all), "\n"))
	}
	if _, err := os.Stat(denied); err == nil {
		t.Error("denied.txt was written")
	}
	if !model.sawDenial("not that one") {
		t.Error("the denial's message did not reach the model")
	}

	t.Log("1 killed mid-turn; 2's stream ends; 3 continues the session")
	id = newSession(t, one)
	own = startTurn(t, one, id, "[hang] before the crash")
	own.until("text_delta")
	viaTwo = follow(t, two, id, "")
	viaTwo.until("text_delta")
	if err := one.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-one.done // then its cleanup finds it exited
	killed := time.Now()
	frs = viaTwo.rest()
	// For whoever reads -v; not an assertion.
	t.Logf("2's stream of the lost turn ended %v after the kill", time.Since(killed).Round(time.Millisecond))
	if n := len(frs); n < 2 || frs[n-2].Type != "error" || !strings.Contains(frs[n-2].str("message"), holder(one)) ||
		frs[n-1].Type != "done" || frs[n-1].str("reason") != "error" {
		t.Fatalf("2's stream of the lost turn: %v", datas(viaTwo.all))
	}
	for _, s := range []*served{two, three} {
		detail := getSession(t, s, id)
		if len(detail.Messages) != 1 || detail.Messages[0].Role != "user" || detail.Messages[0].Content != "[hang] before the crash" || detail.RunningTurn != "" {
			t.Errorf("after the kill, %s shows %+v", s.base, detail)
		}
	}
	frs = startTurn(t, three, id, "after the crash").rest()
	if last := frs[len(frs)-1]; last.Type != "done" || last.str("reason") != "stop" || last.str("text") != "You said: after the crash" {
		t.Fatalf("a turn on 3 after the crash: %v", datas(frs))
	}
	detail = getSession(t, two, id)
	if n := len(detail.Messages); n != 3 || detail.Messages[0].Content != "[hang] before the crash" ||
		detail.Messages[1].Content != "after the crash" || detail.Messages[2].Content != "You said: after the crash" {
		t.Errorf("after the turn on 3, 2 shows %+v", detail.Messages)
	}
	for _, args := range [][]string{{"sessions", "list"}, {"sessions", "show", id}} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := e.cmd(ctx, "", args...)
		cmd.Env = append(cmd.Env, "HEARTH_DATABASE_URL="+dbURL)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		want := []string{id}
		if args[1] == "show" {
			want = []string{"before the crash", "You said: after the crash"}
		}
		for _, w := range want {
			if err != nil || !strings.Contains(out.String(), w) {
				t.Errorf("hearth %s: %v, no %q in\n%s\n%s", strings.Join(args, " "), err, w, out.String(), errb.String())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "hearth.db")); err == nil {
		t.Error("a SQLite database was made: the instances did not all use PostgreSQL")
	}
	for _, s := range []*served{two, three} {
		if code := s.stop(); code != 0 {
			t.Errorf("%s exited %d after Ctrl-C", s.base, code)
		}
	}
}

// TestE2ESharedStoreResumeAtOnce: a client that loses its connection to
// the instance running a turn, and reconnects at once through another
// with the Last-Event-ID of the last event it got, gets the rest of the
// turn's stream there, although the owner's relay may not have written
// that event yet, or the other's mirror not applied it (it answered 400
// "past the last event" before server/turns.go waited for it).
func TestE2ESharedStoreResumeAtOnce(t *testing.T) {
	e := newE2E(t)
	dbURL := pgtest.URL(t)
	e.serveFor = 10 * time.Minute
	model := newSharedModel(t, e.srv)
	env := []string{"HEARTH_DATABASE_URL=" + dbURL, "OLLAMA_HOST=" + model.url}
	one, other := e.serve(env), e.serve(env)
	// Each event is a chance (a window of milliseconds) to catch the
	// race: 50 turns caught it in most runs.
	for range 50 {
		id := newSession(t, one)
		own := startTurn(t, one, id, "a few words to echo")
		// A stream through the other instance after each event, opened as
		// soon as the event came (read once the turn is over).
		var there []*sseStream
		for {
			fr, ok := own.nextOrEnd()
			if !ok {
				break
			}
			there = append(there, follow(t, other, id, fr.ID)) // fails the test on a 400
		}
		for i, st := range there {
			want := own.all[i+1:]
			if got := st.rest(); !slices.Equal(datas(got), datas(want)) {
				t.Fatalf("resumed through the other instance after %s, it sent\n%s\nwant\n%s",
					own.all[i].ID, strings.Join(datas(got), "\n"), strings.Join(datas(want), "\n"))
			}
		}
	}
}

// The gated answer: gatedBefore is sent, then nothing until the test opens
// the gate, then gatedAfter. The hanging one sends hangBefore, then
// nothing for an hour.
const (
	gatedBefore = "one two three four five "
	gatedAfter  = "six seven eight nine ten."
	hangBefore  = "Partial "
)

// sharedModel is the scripted model of TestE2ESharedStore, in front of
// an llmtest server (whose built-in endpoints describe the model). Its
// /api/chat answers by the user's last message:
//
//   - a title request (not streamed): a title;
//   - "[gated] …": gatedBefore in words, then, once open is called,
//     gatedAfter;
//   - "[hang] …": hangBefore, then nothing for an hour;
//   - "[write] …": a write_file of allowed.txt, then of denied.txt (each
//     needs approval), then an answer;
//   - anything else: "You said: " and the message.
type sharedModel struct {
	t    *testing.T
	url  string
	gate chan struct{}
	reqs chan string // the bodies of the chat requests, for sawDenial
}

func newSharedModel(t *testing.T, srv *llmtest.Server) *sharedModel {
	m := &sharedModel{t: t, gate: make(chan struct{}), reqs: make(chan string, 1000)}
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/chat" {
			proxy.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		select {
		case m.reqs <- string(body):
		default:
		}
		m.answer(w, r, body)
	}))
	t.Cleanup(front.Close)
	m.url = front.URL
	return m
}

// open lets the gated answer go on.
func (m *sharedModel) open() { close(m.gate) }

// sawDenial reports whether a chat request held text (a denial's message
// reaching the model).
func (m *sharedModel) sawDenial(text string) bool {
	for {
		select {
		case body := <-m.reqs:
			if strings.Contains(body, text) {
				return true
			}
		default:
			return false
		}
	}
}

func (m *sharedModel) answer(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Stream   bool `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prompt, results := "", 0
	for _, msg := range req.Messages {
		switch msg.Role {
		case "user":
			prompt, results = msg.Content, 0
		case "tool":
			results++
		}
	}
	usage := llmtest.Usage(1600, 10)
	gateAt := 0 // the chunks sent before the gate: 0, none
	var sc llmtest.Scenario
	switch {
	case !req.Stream || strings.HasPrefix(prompt, "Write a title"):
		sc = llmtest.OllamaWhole("m", llmtest.Text("A shared session"))
	case strings.HasPrefix(prompt, "[gated]"):
		// A word a chunk, a little apart.
		var parts []llmtest.Part
		for _, w := range strings.SplitAfter(gatedBefore, " ") {
			if w != "" {
				parts = append(parts, llmtest.Pause(5*time.Millisecond), llmtest.Text(w))
				gateAt++
			}
		}
		for _, w := range strings.SplitAfter(gatedAfter, " ") {
			parts = append(parts, llmtest.Pause(5*time.Millisecond), llmtest.Text(w))
		}
		sc = llmtest.OllamaStream("m", append(parts, usage)...)
	case strings.HasPrefix(prompt, "[hang]"):
		sc = llmtest.OllamaStream("m", llmtest.Text(hangBefore), llmtest.Pause(time.Hour), llmtest.Text("never"), usage)
	case strings.HasPrefix(prompt, "[write]") && results == 0:
		sc = llmtest.OllamaStream("m", llmtest.CallID("call-allowed", "write_file", `{"file_path":"allowed.txt","content":"allowed\n"}`), usage)
	case strings.HasPrefix(prompt, "[write]") && results == 1:
		sc = llmtest.OllamaStream("m", llmtest.CallID("call-denied", "write_file", `{"file_path":"denied.txt","content":"denied\n"}`), usage)
	case strings.HasPrefix(prompt, "[write]"):
		sc = llmtest.OllamaStream("m", llmtest.Text("Wrote one; the other was denied."), usage)
	default:
		sc = llmtest.OllamaStream("m", llmtest.Text("You said: "+prompt), usage)
	}
	m.play(w, r, sc, gateAt)
}

// play sends a scenario's chunks, waiting for the gate before chunk
// gateAt (not when it is 0), until the client goes.
func (m *sharedModel) play(w http.ResponseWriter, r *http.Request, sc llmtest.Scenario, gateAt int) {
	for k, v := range sc.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	for i, c := range sc.Chunks {
		if i == gateAt && i > 0 {
			select {
			case <-m.gate:
			case <-r.Context().Done():
				return
			}
		}
		if c.Delay > 0 {
			timer := time.NewTimer(c.Delay)
			select {
			case <-timer.C:
			case <-r.Context().Done():
				timer.Stop()
				return
			}
		}
		if _, err := io.WriteString(w, c.Data); err != nil || rc.Flush() != nil {
			return
		}
	}
}

// sseFrame is one event of a stream: its id, its JSON and the JSON's type.
type sseFrame struct {
	ID, Data, Type string
}

func (f sseFrame) str(key string) string {
	var m map[string]any
	json.Unmarshal([]byte(f.Data), &m)
	s, _ := m[key].(string)
	return s
}

func datas(frs []sseFrame) []string {
	var out []string
	for _, f := range frs {
		out = append(out, f.ID+" "+f.Data)
	}
	return out
}

// sseStream reads a stream of Server-Sent Events as it comes.
type sseStream struct {
	t      *testing.T
	what   string
	resp   *http.Response
	frames chan sseFrame
	// all is every frame read so far.
	all []sseFrame
}

// openStream sends a request whose answer is an event stream, and reads
// it; it fails the test on any other answer.
func openStream(t *testing.T, s *served, method, path, lastID, body string) *sseStream {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s %s%s: %d %s", method, s.base, path, resp.StatusCode, data)
	}
	st := &sseStream{t: t, what: method + " " + s.base + path, resp: resp, frames: make(chan sseFrame, 1000)}
	go func() {
		defer close(st.frames)
		lines := bufio.NewReader(resp.Body)
		var fr sseFrame
		for {
			line, err := lines.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case line == "":
				if fr.Data != "" {
					var head struct{ Type string }
					json.Unmarshal([]byte(fr.Data), &head)
					fr.Type = head.Type
					st.frames <- fr
				}
				fr = sseFrame{}
			case strings.HasPrefix(line, "id: "):
				fr.ID = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "data: "):
				fr.Data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return st
}

// next returns the stream's next event; the test fails if the stream ends
// or nothing comes for streamWait.
func (st *sseStream) next() sseFrame {
	st.t.Helper()
	fr, ok := st.nextOrEnd()
	if !ok {
		st.t.Fatalf("%s ended after %v", st.what, datas(st.all))
	}
	return fr
}

func (st *sseStream) nextOrEnd() (sseFrame, bool) {
	st.t.Helper()
	timer := time.NewTimer(streamWait)
	defer timer.Stop()
	select {
	case fr, ok := <-st.frames:
		if ok {
			st.all = append(st.all, fr)
		}
		return fr, ok
	case <-timer.C:
		st.t.Fatalf("%s: no event for %v (a hang) after %v", st.what, streamWait, datas(st.all))
		return sseFrame{}, false
	}
}

// until reads up to the first event of type typ and returns what it read.
func (st *sseStream) until(typ string) []sseFrame {
	st.t.Helper()
	var out []sseFrame
	for {
		fr := st.next()
		out = append(out, fr)
		if fr.Type == typ {
			return out
		}
	}
}

// take reads n events and returns them.
func (st *sseStream) take(n int) []sseFrame {
	st.t.Helper()
	var out []sseFrame
	for range n {
		out = append(out, st.next())
	}
	return out
}

// rest reads the stream to its end and returns what it read.
func (st *sseStream) rest() []sseFrame {
	st.t.Helper()
	var out []sseFrame
	for {
		fr, ok := st.nextOrEnd()
		if !ok {
			return out
		}
		out = append(out, fr)
	}
}

// startTurn starts a turn in session id and returns its stream.
func startTurn(t *testing.T, s *served, id, message string) *sseStream {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"message": message})
	return openStream(t, s, "POST", "/v1/sessions/"+id+"/turns", "", string(body))
}

// follow streams session id's turn, after the event lastID when it is
// given.
func follow(t *testing.T, s *served, id, lastID string) *sseStream {
	t.Helper()
	return openStream(t, s, "GET", "/v1/sessions/"+id+"/events", lastID, "")
}

func newSession(t *testing.T, s *served) string {
	t.Helper()
	code, body := s.call("POST", "/v1/sessions", s.token, "")
	var se struct{ ID string }
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &se) != nil || se.ID == "" {
		t.Fatalf("creating a session on %s: %d %s", s.base, code, body)
	}
	return se.ID
}

// sessionView is GET /v1/sessions/{id}, as far as the test reads it.
type sessionView struct {
	RunningTurn string `json:"running_turn"`
	Messages    []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Partial bool   `json:"partial"`
	} `json:"messages"`
}

func getSession(t *testing.T, s *served, id string) sessionView {
	t.Helper()
	var v sessionView
	getJSON(t, s, "/v1/sessions/"+id, &v)
	return v
}

func getJSON(t *testing.T, s *served, path string, v any) {
	t.Helper()
	code, body := s.call("GET", path, s.token, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s%s: %d %s", s.base, path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("GET %s%s: %v\n%s", s.base, path, err, body)
	}
}

// apiError reads an error response.
func apiError(code int, body string) (int, string, string) {
	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal([]byte(body), &e)
	return code, e.Error.Code, e.Error.Message
}
