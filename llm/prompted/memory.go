package prompted

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// RefusalTTL is how long a refusal of native tools is remembered: after
// it, native tools are tried again (the server may have been upgraded or
// restarted with a tool parser), and a new refusal is remembered again.
const RefusalTTL = 7 * 24 * time.Hour

// expired reports whether a refusal at the given time is no longer
// remembered at now.
func expired(at, now time.Time) bool {
	return now.Sub(at) > RefusalTTL
}

// Memory remembers, per model, that its server refused native tools, so
// that a later run drives the model with the prompted protocol straight
// away instead of failing a request first. The Provider forgets a refusal
// older than RefusalTTL, whatever the Memory says.
type Memory interface {
	// Refused reports when the server refused tools for model, if it did.
	Refused(model string) (at time.Time, ok bool)
	// RememberRefused records that the server refused tools for model.
	RememberRefused(model string, at time.Time) error
}

// FileMemory is a Memory kept in a JSON file (for Hearth,
// $XDG_DATA_HOME/hearth/tool-modes.json), keyed by server and model, so one
// file serves every server the user talks to. Each write replaces the file
// atomically (a temporary file renamed over it): several processes may share
// it, the last writer winning, and none ever reads a torn file. A file that
// cannot be read as JSON is taken as empty (and logged), and replaced at the
// next write. An entry older than RefusalTTL reads as no refusal.
type FileMemory struct {
	path   string
	server string
	// Logger receives what went wrong reading the file; nil discards it.
	Logger *slog.Logger
	// now is the clock (tests set it); nil is time.Now.
	now func() time.Time

	mu sync.Mutex // serialises this process's read-modify-write
}

// fileVersion is the version of the file's format.
const fileVersion = 1

// memoryFile is the file's content.
type memoryFile struct {
	Version int `json:"version"`
	// Servers maps a server's base URL to its models' entries.
	Servers map[string]map[string]memoryEntry `json:"servers"`
}

type memoryEntry struct {
	// RefusedAt is when the server refused native tools for the model.
	RefusedAt time.Time `json:"refused_at"`
}

// NewFileMemory returns a FileMemory in the file at path for the server at
// base URL server (as given to the provider: trailing slashes do not
// matter). The file and its folder are made at the first write.
func NewFileMemory(path, server string) *FileMemory {
	return &FileMemory{path: path, server: strings.TrimRight(server, "/")}
}

// Refused reports when the server refused tools for model, as the file says,
// if that was less than RefusalTTL ago.
func (m *FileMemory) Refused(model string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.read()
	e, ok := f.Servers[m.server][model]
	now := time.Now
	if m.now != nil {
		now = m.now
	}
	if !ok || e.RefusedAt.IsZero() || expired(e.RefusedAt, now()) {
		return time.Time{}, false
	}
	return e.RefusedAt, true
}

// RememberRefused records in the file that the server refused tools for
// model at the given time.
func (m *FileMemory) RememberRefused(model string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.read()
	if f.Servers == nil {
		f.Servers = map[string]map[string]memoryEntry{}
	}
	if f.Servers[m.server] == nil {
		f.Servers[m.server] = map[string]memoryEntry{}
	}
	f.Version = fileVersion
	f.Servers[m.server][model] = memoryEntry{RefusedAt: at.UTC().Truncate(time.Second)}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("remembering the tool mode of %s: %w", model, err)
	}
	if err := writeAtomic(m.path, append(b, '\n')); err != nil {
		return fmt.Errorf("remembering the tool mode of %s: %w", model, err)
	}
	return nil
}

// read loads the file; a missing or unreadable one is empty.
func (m *FileMemory) read() memoryFile {
	var f memoryFile
	b, err := os.ReadFile(m.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f
	case err != nil:
		m.log().Warn("cannot read the remembered tool modes; taking none", "path", m.path, "err", err)
		return f
	}
	if err := json.Unmarshal(b, &f); err != nil {
		m.log().Warn("the remembered tool modes are not valid JSON; taking none (the file is replaced at the next write)", "path", m.path, "err", err)
		return memoryFile{}
	}
	return f
}

func (m *FileMemory) log() *slog.Logger {
	if m.Logger != nil {
		return m.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// writeAtomic replaces path with b: written to a temporary file in the same
// folder, synced, then renamed over path.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		os.Remove(name)
	}
	return err
}
