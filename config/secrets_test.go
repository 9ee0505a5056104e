package config

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSessionBus: the keychain is used only where a session bus is there
// to reach, never where the D-Bus library would start one.
func TestSessionBus(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("the keychain is not on D-Bus here")
	}
	withSocket := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(withSocket, "bus"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	withFile := t.TempDir()
	if err := os.WriteFile(filepath.Join(withFile, "bus"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		env  map[string]string
		ok   bool
	}{
		{"nothing set", nil, false},
		{"address set", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus"}, true},
		{"systemd's socket", map[string]string{"XDG_RUNTIME_DIR": withSocket}, true},
		{"runtime dir without a bus", map[string]string{"XDG_RUNTIME_DIR": t.TempDir()}, false},
		{"a file that is not a socket", map[string]string{"XDG_RUNTIME_DIR": withFile}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := SessionBus(func(k string) string { return c.env[k] })
			if (err == nil) != c.ok {
				t.Fatalf("sessionBus = %v, want ok %v", err, c.ok)
			}
			if err != nil && !errors.Is(err, errNoSessionBus) {
				t.Fatalf("sessionBus = %v, want errNoSessionBus", err)
			}
		})
	}
}

// TestNoSessionBusNoKeyring: with no session bus, the system keychain
// fails at once (the secret goes to the file) rather than start a bus.
func TestNoSessionBusNoKeyring(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("the keychain is not on D-Bus here")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if _, err := (SystemKeyring{}).Get("hearth", "x"); !errors.Is(err, errNoSessionBus) {
		t.Fatalf("Get = %v, want errNoSessionBus", err)
	}
	s := &Secrets{Keyring: SystemKeyring{}, File: filepath.Join(t.TempDir(), "secrets.toml"), Log: slog.New(slog.DiscardHandler)}
	where, err := s.Set("p", "k")
	if err != nil || where == "the system keychain" {
		t.Fatalf("Set = %q, %v; want the file", where, err)
	}
	if v, err := s.Get("p"); err != nil || v != "k" {
		t.Fatalf("Get = %q, %v", v, err)
	}
}
