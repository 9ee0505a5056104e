package mcp

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/tool"
)

// Start-up: the time from a session's start (Manager.Start) to its tools
// being ready (in the registry, Wait returned), for three stdio servers
// started together, against each server's own start alone. Servers start in
// parallel, so three should cost no more than the slowest alone plus 20 ms.
//
//	go test -run='^$' -bench=Startup -benchtime=20x ./mcp/
//	HEARTH_MCP_SERVERS=$(scripts/mcp-servers.sh) go test -run='^$' -bench=Startup -benchtime=10x ./mcp/

// startOnce starts the servers and returns the time until their tools are
// in a registry, and the longest any one of them took to start in that run.
func startOnce(tb testing.TB, cfgs []ServerConfig) (ready, slowest time.Duration) {
	m, err := New(Options{Servers: cfgs})
	if err != nil {
		tb.Fatal(err)
	}
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	t0 := time.Now()
	m.Start()
	if err := m.Wait(context.Background()); err != nil {
		tb.Fatal(err)
	}
	ready = time.Since(t0)
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state != StateReady {
			tb.Fatalf("%s: %s %s", s.cfg.Name, s.state, s.errText)
		}
		slowest = max(slowest, s.startDur)
		s.mu.Unlock()
	}
	if len(reg.Names()) == 0 {
		tb.Fatal("no tools")
	}
	m.Close()
	return ready, slowest
}

// fakeTrio is three fake servers that take 60, 120 and 180 ms to start.
func fakeTrio(tb testing.TB) []ServerConfig {
	return []ServerConfig{
		fake(tb, "a", "ok", "HEARTH_FAKE_DELAY", "60ms"),
		fake(tb, "b", "ok", "HEARTH_FAKE_DELAY", "120ms"),
		fake(tb, "c", "ok", "HEARTH_FAKE_DELAY", "180ms"),
	}
}

// npmTrio is server-everything twice and server-filesystem.
func npmTrio(tb testing.TB) []ServerConfig {
	dir := npmServers(tb)
	e2 := everything(dir)
	e2.Name = "everything2"
	return []ServerConfig{everything(dir), e2, {Name: "fs", Command: "node", Args: []string{filesystemJS(dir), tb.TempDir()}}}
}

func BenchmarkStartup(b *testing.B) {
	for _, set := range []struct {
		name string
		cfgs func(testing.TB) []ServerConfig
	}{{"fake", fakeTrio}, {"npm", npmTrio}} {
		b.Run(set.name, func(b *testing.B) {
			cfgs := set.cfgs(b)
			measure := func(b *testing.B, cfgs []ServerConfig) {
				var ready, own time.Duration
				n := 0
				for b.Loop() {
					r, o := startOnce(b, cfgs)
					ready, own, n = ready+r, own+o, n+1
				}
				b.ReportMetric(float64(ready.Microseconds())/1000/float64(n), "ms-ready")
				b.ReportMetric(float64(own.Microseconds())/1000/float64(n), "ms-slowest-own")
			}
			for _, c := range cfgs {
				b.Run("alone-"+c.Name, func(b *testing.B) { measure(b, []ServerConfig{c}) })
			}
			b.Run("three", func(b *testing.B) { measure(b, cfgs) })
		})
	}
}

// TestStartupInParallel checks on the fake servers that three servers start
// in parallel: each waits, before it answers, until all three have been
// launched (HEARTH_FAKE_BARRIER), so they can only become ready if they were
// started together; started one after the other, the first would wait for
// the others for ever (the start timeout is a mere hang detector). How fast
// they start is measured by BenchmarkStartup, not asserted here.
func TestStartupInParallel(t *testing.T) {
	dir := t.TempDir()
	barrier := dir + ":3"
	var cfgs []ServerConfig
	for i, d := range []string{"60ms", "0s", "120ms"} {
		c := fake(t, string(rune('a'+i)), "ok", "HEARTH_FAKE_DELAY", d, "HEARTH_FAKE_BARRIER", barrier)
		c.StartTimeout = 2 * time.Minute
		cfgs = append(cfgs, c)
	}
	m, err := New(Options{Servers: cfgs})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	m.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := m.Wait(ctx); err != nil {
		es, _ := os.ReadDir(dir)
		t.Fatalf("the servers were not ready (%v): %d of 3 had been launched while the first waited: they do not start in parallel", err, len(es))
	}
	for _, s := range m.Status() {
		if s.State != StateReady {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	for _, name := range []string{"a__echo", "b__echo", "c__echo"} {
		if _, ok := reg.Get(name); !ok {
			t.Errorf("%s is not in the registry", name)
		}
	}
}
