package single

import (
	"bufio"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startBus starts a private session bus and points the test at it.
func startBus(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(line))
}

// TestClaim: the first launch owns the name; a later one hands over its
// arguments and folder, and is told to exit.
func TestClaim(t *testing.T) {
	startBus(t)
	got := make(chan Launch, 1)
	first, ok, err := Claim(context.Background(), "dev.hearth.Test", Launch{}, func(l Launch) { got <- l })
	if err != nil || !ok || first == nil {
		t.Fatalf("first Claim = %v, %v, %v", first, ok, err)
	}
	defer first.Close()
	second, ok, err := Claim(context.Background(), "dev.hearth.Test", Launch{Args: []string{"--model", "m", "proj"}, Dir: "/work"}, func(Launch) {
		t.Error("the second launch was handed a launch")
	})
	if err != nil || ok || second != nil {
		t.Fatalf("second Claim = %v, %v, %v; want to be told to exit", second, ok, err)
	}
	select {
	case l := <-got:
		if strings.Join(l.Args, " ") != "--model m proj" || l.Dir != "/work" {
			t.Fatalf("handed %+v", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the first instance was not told of the second launch")
	}
	// Once the first has gone, the next launch is the first again.
	first.Close()
	third, ok, err := Claim(context.Background(), "dev.hearth.Test", Launch{}, func(Launch) {})
	if err != nil || !ok {
		t.Fatalf("Claim after the first closed = %v, %v", ok, err)
	}
	third.Close()
}

// TestNoBus: without a session bus nothing is started; every launch runs.
func TestNoBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	inst, ok, err := Claim(context.Background(), "dev.hearth.Test", Launch{}, func(Launch) {})
	if !ok || inst != nil || !errors.Is(err, ErrNoBus) {
		t.Fatalf("Claim = %v, %v, %v; want to run alone with ErrNoBus", inst, ok, err)
	}
	// A bus address that leads nowhere is no bus either.
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "none"))
	if _, ok, err := Claim(context.Background(), "dev.hearth.Test", Launch{}, func(Launch) {}); !ok || !errors.Is(err, ErrNoBus) {
		t.Fatalf("Claim with a dead address = %v, %v", ok, err)
	}
}
