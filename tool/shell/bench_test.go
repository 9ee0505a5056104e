package shell

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/sandbox"
)

func benchTool(b *testing.B) *Tool {
	w, err := sandbox.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tl, err := New(Config{Workspace: w, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tl.Close() })
	return tl
}

// A builtin: parse, check, interpret; no process.
func BenchmarkCallBuiltin(b *testing.B) {
	tl := benchTool(b)
	for b.Loop() {
		if o := tl.run(context.Background(), "echo hi", tl.ws.Root(), nil); o.exit != 0 || o.err != nil {
			b.Fatal(o)
		}
	}
}

// One program, started through the confining launcher.
func BenchmarkCallProgram(b *testing.B) {
	tl := benchTool(b)
	for b.Loop() {
		if o := tl.run(context.Background(), "/bin/true", tl.ws.Root(), nil); o.exit != 0 || o.err != nil {
			b.Fatal(o)
		}
	}
}

// The same program started directly, for comparison.
func BenchmarkExecDirect(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPolicyCheck(b *testing.B) {
	tl := benchTool(b)
	argv := []string{"rm", "-rf", "build", "dist", "node_modules"}
	for b.Loop() {
		if err := tl.policy.Check(argv, tl.ws.Root()); err != nil {
			b.Fatal(err)
		}
	}
}

// The same program through a shell host started without namespaces
// (Landlock alone), to show what the namespaces cost.
func BenchmarkCallProgramNoNamespaces(b *testing.B) {
	tl := benchTool(b)
	tl.conf.DisableNamespaces()
	for b.Loop() {
		if o := tl.run(context.Background(), "/bin/true", tl.ws.Root(), nil); o.exit != 0 || o.err != nil {
			b.Fatal(o)
		}
	}
}

// A program run when the spare host is ready, as it is when the model
// takes more than a moment between commands: the wait for the spare is
// outside the timer.
func BenchmarkCallProgramWarm(b *testing.B) {
	tl := benchTool(b)
	tl.run(context.Background(), "true", tl.ws.Root(), nil)
	for b.Loop() {
		b.StopTimer()
		for {
			tl.spareMu.Lock()
			ready := tl.spare != nil
			tl.spareMu.Unlock()
			if ready {
				break
			}
			time.Sleep(time.Millisecond)
		}
		b.StartTimer()
		if o := tl.run(context.Background(), "/bin/true", tl.ws.Root(), nil); o.exit != 0 || o.err != nil {
			b.Fatal(o)
		}
	}
}
