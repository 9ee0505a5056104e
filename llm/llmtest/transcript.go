package llmtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Transcript is a raw capture of one exchange with a real server, kept as
// test data. The file format (shared with ../shared/ollama-peer/transcripts):
//
//	# source: where the shape comes from (URLs)
//	# server: which server and version
//	# what: what the scenario shows
//	# expect: {"text":…,"thinking":…,"tool_calls":[…],"finish":…,"usage":…,"error":…}
//	>>> POST /v1/chat/completions
//	>>> body: {…}
//	>>> response (curl -i):
//	HTTP/1.1 200 OK
//	Content-Type: text/event-stream
//
//	data: {…}
type Transcript struct {
	Name   string
	Source string
	Server string
	What   string
	// Client holds settings the client needs for this exchange that the
	// wire does not show ("# client:" JSON), e.g. {"implicit_think":true}
	// for a model whose template opens <think> in the prompt.
	Client struct {
		ImplicitThink bool `json:"implicit_think"`
	}
	// Expect is what a correct client makes of the response, when the
	// file says.
	Expect *Expect
	Method string
	Path   string
	// RequestBody is the request as captured.
	RequestBody []byte
	// Response replays the captured response, one chunk per SSE event or
	// NDJSON line.
	Response Scenario
}

// Expect is a transcript's "# expect:" line.
type Expect struct {
	Text      string `json:"text"`
	Thinking  string `json:"thinking"`
	ToolCalls []struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"tool_calls"`
	Finish string `json:"finish"`
	Usage  *struct {
		Input  int `json:"input"`
		Output int `json:"output"`
	} `json:"usage"`
	Error        string   `json:"error"`
	OfferedTools []string `json:"offered_tools"`
}

// LoadTranscripts loads every *.txt file in dir.
func LoadTranscripts(dir string) ([]*Transcript, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	var out []*Transcript
	for _, f := range files {
		t, err := LoadTranscript(f)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// LoadTranscript reads one transcript file.
func LoadTranscript(path string) (*Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading transcript: %w", err)
	}
	t, err := ParseTranscript(string(data))
	if err != nil {
		return nil, fmt.Errorf("transcript %s: %w", path, err)
	}
	t.Name = strings.TrimSuffix(filepath.Base(path), ".txt")
	return t, nil
}

// ParseTranscript parses the text of a transcript.
func ParseTranscript(text string) (*Transcript, error) {
	t := &Transcript{}
	rest := text
	for {
		line, after, ok := strings.Cut(rest, "\n")
		if !ok {
			return nil, fmt.Errorf("no response section")
		}
		rest = after
		switch {
		case strings.HasPrefix(line, "# "):
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "# "), ":")
			v = strings.TrimSpace(v)
			switch k {
			case "source":
				t.Source = v
			case "server":
				t.Server = v
			case "what":
				t.What = v
			case "client":
				if err := json.Unmarshal([]byte(v), &t.Client); err != nil {
					return nil, fmt.Errorf("bad # client line: %w", err)
				}
			case "expect":
				t.Expect = &Expect{}
				if err := json.Unmarshal([]byte(v), t.Expect); err != nil {
					return nil, fmt.Errorf("bad # expect line: %w", err)
				}
			}
		case strings.HasPrefix(line, ">>> body: "):
			t.RequestBody = []byte(strings.TrimPrefix(line, ">>> body: "))
		case strings.HasPrefix(line, ">>> response"):
			sc, err := parseResponse(rest)
			if err != nil {
				return nil, err
			}
			t.Response = sc
			return t, nil
		case strings.HasPrefix(line, ">>> "):
			f := strings.Fields(strings.TrimPrefix(line, ">>> "))
			if len(f) >= 2 {
				t.Method, t.Path = f[0], f[1]
			}
		}
	}
}

func parseResponse(raw string) (Scenario, error) {
	r := bufio.NewReader(strings.NewReader(raw))
	status, err := r.ReadString('\n')
	if err != nil {
		return Scenario{}, fmt.Errorf("no status line")
	}
	f := strings.Fields(status)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return Scenario{}, fmt.Errorf("bad status line %q", status)
	}
	code, err := strconv.Atoi(f[1])
	if err != nil {
		return Scenario{}, fmt.Errorf("bad status %q", f[1])
	}
	sc := Scenario{Status: code, Header: http.Header{}}
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if err != nil {
			return Scenario{}, fmt.Errorf("headers not ended")
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "content-length", "transfer-encoding", "date", "connection", "keep-alive":
			continue
		}
		sc.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	var body strings.Builder
	for {
		line, err := r.ReadString('\n')
		body.WriteString(line)
		if err != nil {
			break
		}
	}
	b := body.String()
	ctype := sc.Header.Get("Content-Type")
	switch {
	case strings.Contains(ctype, "event-stream"):
		b = strings.ReplaceAll(b, "\r\n", "\n")
		for _, ev := range strings.SplitAfter(b, "\n\n") {
			if strings.TrimSpace(ev) != "" {
				sc.Chunks = append(sc.Chunks, Chunk{Data: ev})
			}
		}
	case strings.Contains(ctype, "ndjson"):
		for _, line := range strings.SplitAfter(b, "\n") {
			if strings.TrimSpace(line) != "" {
				sc.Chunks = append(sc.Chunks, Chunk{Data: line})
			}
		}
	default:
		sc.Chunks = []Chunk{{Data: strings.TrimRight(b, "\n") + "\n"}}
	}
	return sc, nil
}
