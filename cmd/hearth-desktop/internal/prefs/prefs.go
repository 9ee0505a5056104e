// Package prefs keeps what the desktop app remembers between launches: the
// window's size and position, its zoom, and the workspace last open. They
// live in one small JSON file in the user's state directory
// ($XDG_STATE_HOME/hearth/desktop.json), written whole or not at all.
package prefs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Prefs are the remembered settings. Zero values mean "not known yet".
type Prefs struct {
	// Width and Height are the window's size in pixels.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// X and Y are the window's position on the screen; Placed says they
	// were recorded (0,0 is a position).
	X      int  `json:"x"`
	Y      int  `json:"y"`
	Placed bool `json:"placed,omitempty"`
	// Maximised is whether the window filled the screen.
	Maximised bool `json:"maximised,omitempty"`
	// Zoom is the page's zoom factor (1 when 0).
	Zoom float64 `json:"zoom,omitempty"`
	// Workspace is the folder last open.
	Workspace string `json:"workspace,omitempty"`
}

// Default sizes of a first window, and the bounds a remembered one is
// kept in (a size from a bigger screen, or a broken file, must not make a
// window nobody can use).
const (
	DefaultWidth  = 1100
	DefaultHeight = 760
	MinWidth      = 480
	MinHeight     = 360
	maxSide       = 16384
	MinZoom       = 0.5
	MaxZoom       = 3
)

// Dir returns the directory the file lives in: HEARTH_HOME when that is
// set (Hearth's one-directory layout), else $XDG_STATE_HOME/hearth, else
// ~/.local/state/hearth.
func Dir(getenv func(string) string) (string, error) {
	if h := getenv("HEARTH_HOME"); h != "" {
		return h, nil
	}
	if s := getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "hearth"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot find the state directory: set HOME or XDG_STATE_HOME")
	}
	return filepath.Join(home, ".local", "state", "hearth"), nil
}

// File is the prefs file in dir.
func File(dir string) string { return filepath.Join(dir, "desktop.json") }

// Load reads the prefs at path. A missing file gives the defaults and no
// error; a file that cannot be read or parsed gives the defaults and the
// error, for a warning (the next Save replaces it).
func Load(path string) (Prefs, error) {
	var p Prefs
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return p.Clean(), nil
	}
	if err != nil {
		return p.Clean(), fmt.Errorf("reading the desktop app's settings: %w", err)
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return Prefs{}.Clean(), fmt.Errorf("reading the desktop app's settings from %s: %w (they start again from the defaults)", path, err)
	}
	return p.Clean(), nil
}

// Clean puts every value in its bounds: defaults for sizes unknown or out
// of range, zoom between MinZoom and MaxZoom.
func (p Prefs) Clean() Prefs {
	if p.Width < MinWidth || p.Width > maxSide || p.Height < MinHeight || p.Height > maxSide {
		p.Width, p.Height = DefaultWidth, DefaultHeight
	}
	if p.X < -maxSide || p.X > maxSide || p.Y < -maxSide || p.Y > maxSide {
		p.X, p.Y, p.Placed = 0, 0, false
	}
	switch {
	case p.Zoom == 0 || math.IsNaN(p.Zoom):
		p.Zoom = 1
	case p.Zoom < MinZoom:
		p.Zoom = MinZoom
	case p.Zoom > MaxZoom:
		p.Zoom = MaxZoom
	}
	return p
}

// Save writes p to path: a temporary file beside it, then renamed over it,
// so a crash leaves the old file or the new one. The directory is made
// (0700) if need be; the file is the user's only (0600).
func Save(path string, p Prefs) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("saving the desktop app's settings: %w", err)
	}
	b, err := json.MarshalIndent(p.Clean(), "", "  ")
	if err != nil {
		return fmt.Errorf("saving the desktop app's settings: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".desktop-*.json")
	if err != nil {
		return fmt.Errorf("saving the desktop app's settings: %w", err)
	}
	_, werr := tmp.Write(append(b, '\n'))
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving the desktop app's settings to %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("saving the desktop app's settings to %s: %w", path, err)
	}
	return nil
}
