package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// BenchmarkColdRun measures a whole `hearth run` of a read-a-file task (two
// model requests: a read_file call, then the answer) against the scripted
// fake server: process start, config, store, tools, the turn, exit. Wall
// time and peak resident memory are reported as medians over the runs.
func BenchmarkColdRun(b *testing.B) {
	bin, err := binary()
	if err != nil {
		b.Fatal(err)
	}
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	home, ws := b.TempDir(), b.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("hello\n"), 0o644)
	// An existing session with a title: no title request, exactly two
	// model requests per run.
	st, err := session.Open(context.Background(), filepath.Join(home, "hearth.db"))
	if err != nil {
		b.Fatal(err)
	}
	st.Create(context.Background(), &session.Session{ID: "s1", Title: "bench"})
	st.Close()
	env := append(os.Environ(), "HEARTH_HOME="+home, "OLLAMA_HOST="+srv.URL, "NO_COLOR=1")
	var walls []time.Duration
	var rss []int64
	b.ResetTimer()
	for b.Loop() {
		srv.Enqueue("/api/chat",
			llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"a.txt"}`), llmtest.Usage(1500, 10)),
			llmtest.OllamaStream("m", llmtest.Text("It says hello."), llmtest.Usage(1520, 5)))
		cmd := exec.Command(bin, "-m", "m", "-w", ws, "run", "--context", "s1", "what does a.txt say?")
		cmd.Env = env
		start := time.Now()
		out, err := cmd.Output()
		walls = append(walls, time.Since(start))
		if err != nil || string(out) != "It says hello.\n" {
			b.Fatalf("%v %q", err, out)
		}
		rss = append(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB on Linux
	}
	b.StopTimer()
	sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
	sort.Slice(rss, func(i, j int) bool { return rss[i] < rss[j] })
	b.ReportMetric(float64(walls[len(walls)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(rss[len(rss)/2])/1024, "MB-rss-median")
}
