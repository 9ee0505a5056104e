package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"github.com/pelletier/go-toml/v2"
	"github.com/zalando/go-keyring"
)

// Keyring is the OS keychain (Secret Service, macOS Keychain, Windows
// Credential Manager).
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// SystemKeyring is the OS keychain, through github.com/zalando/go-keyring.
// On Linux and the BSDs that is the Secret Service on the session bus, used
// only when a session bus is there to reach: the D-Bus library would
// otherwise start one (dbus-launch --autolaunch, where dbus-x11 is
// installed), a daemon that outlives Hearth, once per run, on a machine
// reached over SSH.
type SystemKeyring struct{}

// Get reads a secret.
func (SystemKeyring) Get(service, user string) (string, error) {
	if err := SessionBus(os.Getenv); err != nil {
		return "", err
	}
	return keyring.Get(service, user)
}

// Set stores a secret.
func (SystemKeyring) Set(service, user, secret string) error {
	if err := SessionBus(os.Getenv); err != nil {
		return err
	}
	return keyring.Set(service, user, secret)
}

// Delete removes a secret.
func (SystemKeyring) Delete(service, user string) error {
	if err := SessionBus(os.Getenv); err != nil {
		return err
	}
	return keyring.Delete(service, user)
}

// errNoSessionBus is why the keychain is not used where it would start a
// session bus.
var errNoSessionBus = errors.New("no session bus (DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist)")

// SessionBus checks that the keychain, or anything else on the session
// bus, can be reached without starting a bus: on macOS and Windows always;
// elsewhere when the session bus's address is set, or its socket is where
// systemd puts it.
func SessionBus(getenv func(string) string) error {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return nil
	}
	if getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return nil
	}
	if dir := getenv("XDG_RUNTIME_DIR"); dir != "" {
		if fi, err := os.Stat(filepath.Join(dir, "bus")); err == nil && fi.Mode().Type() == fs.ModeSocket {
			return nil
		}
	}
	return errNoSessionBus
}

// keyringService names Hearth's entries in the keychain.
const keyringService = "hearth"

// ErrNoSecret is returned by Secrets.Get for a name with no secret.
var ErrNoSecret = errors.New("no secret stored")

// Secrets keeps API keys: in the keychain where there is one, else in a file
// only the user can read (0600), with a warning, never only in memory.
type Secrets struct {
	Keyring Keyring
	// File is the fallback file (config dir/secrets.toml).
	File string
	Log  *slog.Logger
}

// NewSecrets returns the secrets store for paths.
func NewSecrets(paths Paths, log *slog.Logger) *Secrets {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Secrets{Keyring: SystemKeyring{}, File: filepath.Join(paths.ConfigDir, "secrets.toml"), Log: log}
}

// Set stores the secret for name. It reports where it went.
func (s *Secrets) Set(name, secret string) (where string, err error) {
	if err := s.Keyring.Set(keyringService, name, secret); err == nil {
		return "the system keychain", nil
	} else {
		s.Log.Warn("no usable keychain; keeping the secret in a file only you can read", "file", s.File, "error", err)
	}
	m, err := s.readFile()
	if err != nil {
		return "", err
	}
	m[name] = secret
	if err := s.writeFile(m); err != nil {
		return "", err
	}
	return s.File + " (no keychain available; the file is readable by you only)", nil
}

// Get returns the secret for name, or ErrNoSecret.
func (s *Secrets) Get(name string) (string, error) {
	if v, err := s.Keyring.Get(keyringService, name); err == nil {
		return v, nil
	}
	m, err := s.readFile()
	if err != nil {
		return "", err
	}
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", fmt.Errorf("%w for %q", ErrNoSecret, name)
}

// Delete removes the secret for name from both places.
func (s *Secrets) Delete(name string) error {
	kerr := s.Keyring.Delete(keyringService, name)
	m, err := s.readFile()
	if err != nil {
		return err
	}
	_, inFile := m[name]
	if inFile {
		delete(m, name)
		if err := s.writeFile(m); err != nil {
			return err
		}
	}
	if kerr != nil && !inFile {
		return fmt.Errorf("%w for %q", ErrNoSecret, name)
	}
	return nil
}

func (s *Secrets) readFile() (map[string]string, error) {
	m := map[string]string{}
	data, err := os.ReadFile(s.File)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading secrets: %w", err)
	}
	if fi, err := os.Stat(s.File); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s can be read by other users (mode %v): run `chmod 600 %s`", s.File, fi.Mode().Perm(), s.File)
	}
	if err := toml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", s.File, err)
	}
	return m, nil
}

func (s *Secrets) writeFile(m map[string]string) error {
	data, err := toml.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.File), 0o700); err != nil {
		return err
	}
	tmp := s.File + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, s.File)
}

// NoKeyring is a keychain that is never there: secrets go to the file.
// HEARTH_NO_KEYRING=1 selects it (servers, tests).
type NoKeyring struct{}

var errNoKeyring = errors.New("the keychain is turned off (HEARTH_NO_KEYRING)")

// Get always fails.
func (NoKeyring) Get(string, string) (string, error) { return "", errNoKeyring }

// Set always fails.
func (NoKeyring) Set(string, string, string) error { return errNoKeyring }

// Delete always fails.
func (NoKeyring) Delete(string, string) error { return errNoKeyring }
