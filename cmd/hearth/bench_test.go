package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// rssLauncher builds testdata/rsslaunch once (see there for why the
// benchmark needs it).
var rssLauncher = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hearth-rsslaunch-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "rsslaunch")
	out, err := exec.Command("go", "build", "-o", bin, "./testdata/rsslaunch").CombinedOutput()
	if err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

// installedBinary is the built hearth copied into a new file, the way
// `go install`, install(1) and package managers put it in place. The
// linker's own output is not a fair subject for a memory measurement: on
// these kernels (ext4, Linux 6.18) the page cache it leaves behind is
// mapped in large chunks, and a process started from it counts about 11 MB
// more of the executable as resident than the same bytes copied, or read
// back from disk after `echo 1 > /proc/sys/vm/drop_caches`.
var installedBinary = sync.OnceValues(func() (string, error) {
	built, err := binary()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(filepath.Dir(built), "hearth-installed")
	in, err := os.Open(built)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
})

// helloWorld builds a Go hello-world, the yardstick of a start-up: what
// any Go program pays to start, on this machine, at this moment.
var helloWorld = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hearth-hello-")
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "hello")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

// launched runs bin with args through the launcher and returns its stdout,
// wall time and peak RSS in KiB.
func launched(env []string, bin string, args ...string) (string, time.Duration, int64, error) {
	launcher, err := rssLauncher()
	if err != nil {
		return "", 0, 0, err
	}
	cmd := exec.Command(launcher, append([]string{bin}, args...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var us, kib int64
	i := strings.LastIndex(stderr.String(), "rsslaunch: ")
	if i < 0 {
		return string(out), 0, 0, fmt.Errorf("no report from the launcher: %v: %s", err, stderr.String())
	}
	fmt.Sscanf(stderr.String()[i:], "rsslaunch: wall-us %d maxrss-kib %d", &us, &kib)
	return string(out), time.Duration(us) * time.Microsecond, kib, err
}

// BenchmarkColdRun measures a whole `hearth run` of a read-a-file task (two
// model requests: a read_file call, then the answer) against the scripted
// fake server: process start, config, store, tools, the turn, exit. Wall
// time and peak resident memory are reported as medians over the runs. The
// process is started by a small launcher (testdata/rsslaunch), so that its peak RSS
// is its own rather than the benchmark's. A Go hello-world runs after each
// run, the same way: x-hello is the ratio of the two medians, the figure
// to compare across machines and loads (issue 13's target: 3).
func BenchmarkColdRun(b *testing.B) {
	bin, err := installedBinary()
	if err != nil {
		b.Fatal(err)
	}
	hello, err := helloWorld()
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
	var walls, hellos []time.Duration
	var rss []int64
	b.ResetTimer()
	for b.Loop() {
		srv.Enqueue("/api/chat",
			llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"a.txt"}`), llmtest.Usage(1500, 10)),
			llmtest.OllamaStream("m", llmtest.Text("It says hello."), llmtest.Usage(1520, 5)))
		out, wall, kib, err := launched(env, bin, "-m", "m", "-w", ws, "run", "--context", "s1", "what does a.txt say?")
		if err != nil || out != "It says hello.\n" {
			b.Fatalf("%v %q", err, out)
		}
		walls = append(walls, wall)
		rss = append(rss, kib) // KiB on Linux
		out, wall, _, err = launched(env, hello)
		if err != nil || out != "hello\n" {
			b.Fatalf("hello-world: %v %q", err, out)
		}
		hellos = append(hellos, wall)
	}
	b.StopTimer()
	slices.Sort(walls)
	slices.Sort(hellos)
	slices.Sort(rss)
	med, hmed := walls[len(walls)/2], hellos[len(hellos)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(rss[len(rss)/2])/1024, "MB-rss-median")
	b.ReportMetric(float64(hmed.Microseconds())/1000, "hello-ms-median")
	b.ReportMetric(float64(med)/float64(hmed), "x-hello")
}

// The launcher's own footprint stays well under what it measures: a
// trivial command started through it reports a small peak RSS.
func TestRSSLauncherIsSmall(t *testing.T) {
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	_, _, kib, err := launched(os.Environ(), bin)
	if err != nil {
		t.Fatal(err)
	}
	if kib > 15*1024 {
		t.Errorf("true(1) through the launcher: %d KiB peak RSS; the launcher would hide what it measures", kib)
	}
	t.Logf("true(1) through the launcher: %d KiB", kib)
}
