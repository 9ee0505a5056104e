package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestErrLinesNeverJoin: a whole line (a message, a log record) written
// while streamed text is mid-line starts on a line of its own, and the
// stream goes on under its indent.
func TestErrLinesNeverJoin(t *testing.T) {
	var b bytes.Buffer
	e := &errLines{w: &b}
	s := &stream{out: e, label: "[thinking] ", indent: "           "}
	s.write("\n\nI will read")
	e.Write([]byte("time=T level=DEBUG msg=x\n"))
	s.write(" the file,\x1b]0;title\x07")
	s.write("\nthen answer.\n\n")
	e.Line("hearth: a message")
	s.write("And more.")
	s.end()
	e.Line("done")
	want := "[thinking] I will read\ntime=T level=DEBUG msg=x\n            the file,\n           then answer.\nhearth: a message\n           And more.\ndone\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

// TestLimitedStream: a call's output shows its first lines and counts the
// rest.
func TestLimitedStream(t *testing.T) {
	var b bytes.Buffer
	e := &errLines{w: &b}
	s := &stream{out: e, label: "    ", indent: "    ", maxLines: 2}
	s.write("one\n\ntw")
	s.write("o\nthree\nfour")
	s.end()
	if b.String() != "    one\n    two\n" || s.hidden != 2 {
		t.Errorf("%q, %d hidden", b.String(), s.hidden)
	}
}

// TestSentenceHandler: warnings for a person, in a line, stripped; no
// stack traces; debug and info left out.
func TestSentenceHandler(t *testing.T) {
	var b bytes.Buffer
	s, err := parseLogSettings(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(s.handler(&b)).With("server", "files")
	log.Debug("not shown")
	log.Info("not shown either")
	log.WithGroup("mcp").Warn("mcp server did not start", "error", "exec: \"npx\": not found\x1b]0;x\x07\nsecond line")
	log.Error("tool panic", "tool", "read_file", "stack", "goroutine 1 [running]:\n...")
	want := "hearth: warning: mcp server did not start (server: files; mcp.error: exec: \"npx\": not found second line)\n" +
		"hearth: error: tool panic (server: files; tool: read_file)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("not stripped")
	}
}
