package redteam

import (
	"fmt"
	"net"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// all is every attack, from the class tables.
func all() []attack {
	var as []attack
	for _, f := range []func() []attack{controlAttacks, interpAttacks, gitAttacks, configAttacks, modeAttacks,
		secretAttacks, exfilAttacks, hangAttacks, memoryAttacks, bombAttacks, terminalAttacks, signalAttacks,
		detachAttacks, linkAttacks, fsopsAttacks, envAttacks, deviceAttacks, fsToolAttacks} {
		as = append(as, f()...)
	}
	return as
}

func selected(t *testing.T, exclusive bool) []attack {
	var re *regexp.Regexp
	if s := os.Getenv("HEARTH_REDTEAM_RUN"); s != "" {
		re = regexp.MustCompile(s)
	}
	var out []attack
	for _, a := range all() {
		if a.exclusive != exclusive || (re != nil && !re.MatchString(a.name)) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// TestAttacks runs the attacks that can share the machine, in parallel.
func TestAttacks(t *testing.T) {
	for _, a := range selected(t, false) {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			attackRun(t, &a)
		})
	}
}

// TestExclusive runs fork bombs and memory hogs one at a time, after the
// others, each inside limits that keep the machine safe.
func TestExclusive(t *testing.T) {
	for _, a := range selected(t, true) {
		t.Run(a.name, func(t *testing.T) { attackRun(t, &a) })
	}
}

// TestNames: every attack has a unique name and a class.
func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range all() {
		if a.name == "" || a.class == "" || seen[a.name] {
			t.Errorf("attack %q (class %q): empty or repeated", a.name, a.class)
		}
		seen[a.name] = true
	}
}

// TestDetectors shows each detector sees what it is for, so that a clean
// summary means the attacks failed, not the suite: a changed canary, a
// marker, a connection to each listener, a process left behind.
func TestDetectors(t *testing.T) {
	if hearthBin == "" {
		t.Skip("no hearth binary (-short)")
	}
	e := newEnv(t, &attack{name: "detectors", class: "control"})
	os.WriteFile(filepath.Join(e.out, "victim.txt"), []byte("changed"), 0o644)
	os.Chtimes(filepath.Join(e.home, ".bashrc"), time.Now(), time.Now())
	if d := diff(e.before, e.snapshot()); len(d) != 2 {
		t.Errorf("snapshot: want 2 changes, got %q", d)
	}
	os.WriteFile(filepath.Join(e.mark, "m"), []byte("x"), 0o644)
	if len(e.markers()) != 1 {
		t.Error("marker not seen")
	}
	for _, nw := range []struct{ net, addr string }{{"tcp", fmt.Sprintf("127.0.0.1:%d", e.port)},
		{"udp", fmt.Sprintf("127.0.0.1:%d", e.uport)}, {"unix", e.sock}, {"unix", "@" + e.absName}} {
		c, err := net.Dial(nw.net, nw.addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(secrets()["ssh"]))
		c.Close()
	}
	time.Sleep(300 * time.Millisecond)
	if f := e.exfil(); len(f) != 4 || !strings.Contains(f[0].detail, "carrying secrets") {
		t.Errorf("exfil: %+v", f)
	}
	cmd := osexec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), "REDTEAM_TOK="+e.tok)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go cmd.Wait()
	time.Sleep(100 * time.Millisecond)
	if len(e.leftovers()) != 1 {
		t.Errorf("leftover not seen: %q", e.leftovers())
	}
	e.reap()
	time.Sleep(100 * time.Millisecond)
	if l := e.leftovers(); len(l) != 0 {
		t.Errorf("reap left %q", l)
	}
	if f := e.judge(&run{format: "text"}, &result{exit: 2, stdout: "a\x1b]52;c;x\x07", stderr: "panic: boom"}, ""); len(f) != 3 {
		t.Errorf("judge: %+v", f)
	}
}
