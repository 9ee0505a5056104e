// Tests of the desktop app's remembered settings, written against the
// package's documented contract: Dir picks HEARTH_HOME, else an absolute
// XDG_STATE_HOME (a relative one is ignored, as the XDG spec says), else
// HOME; Load gives the defaults and no error for a missing file, the
// defaults and an error naming the file for one it cannot read or parse,
// and values kept in bounds; Clean clamps sizes, positions and zoom; Save
// round-trips through Load, writes the file 0600 in a directory made 0700,
// replaces the old file by renaming a new one over it and leaves no
// temporary file behind, whether it succeeds or fails.
package prefs_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/prefs"
)

var defaults = prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: 1}

func TestDir(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"HEARTH_HOME first", map[string]string{"HEARTH_HOME": "/h", "XDG_STATE_HOME": "/x", "HOME": "/home/u"}, "/h", false},
		{"HEARTH_HOME alone", map[string]string{"HEARTH_HOME": "/h"}, "/h", false},
		{"XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/hearth", false},
		{"XDG_STATE_HOME without HOME", map[string]string{"XDG_STATE_HOME": "/x"}, "/x/hearth", false},
		{"relative XDG_STATE_HOME ignored", map[string]string{"XDG_STATE_HOME": "rel/state", "HOME": "/home/u"}, "/home/u/.local/state/hearth", false},
		{"dot XDG_STATE_HOME ignored", map[string]string{"XDG_STATE_HOME": ".", "HOME": "/home/u"}, "/home/u/.local/state/hearth", false},
		{"HOME", map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/hearth", false},
		{"empty HEARTH_HOME is unset", map[string]string{"HEARTH_HOME": "", "HOME": "/home/u"}, "/home/u/.local/state/hearth", false},
		{"nothing", map[string]string{}, "", true},
		{"only a relative XDG_STATE_HOME", map[string]string{"XDG_STATE_HOME": "rel"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			got, err := prefs.Dir(getenv)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Dir = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Dir: %v", err)
			}
			if got != filepath.FromSlash(tt.want) {
				t.Errorf("Dir = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFile(t *testing.T) {
	if got, want := prefs.File("/a/b"), filepath.Join("/a/b", "desktop.json"); got != want {
		t.Errorf("File = %q, want %q", got, want)
	}
}

func TestClean(t *testing.T) {
	const maxSide = 16384
	tests := []struct {
		name string
		in   prefs.Prefs
		want prefs.Prefs
	}{
		{"zero", prefs.Prefs{}, defaults},
		{"in bounds", prefs.Prefs{Width: 800, Height: 600, X: 10, Y: 20, Placed: true, Maximised: true, Zoom: 1.25, Workspace: "/w"},
			prefs.Prefs{Width: 800, Height: 600, X: 10, Y: 20, Placed: true, Maximised: true, Zoom: 1.25, Workspace: "/w"}},
		{"smallest size", prefs.Prefs{Width: prefs.MinWidth, Height: prefs.MinHeight, Zoom: 1}, prefs.Prefs{Width: prefs.MinWidth, Height: prefs.MinHeight, Zoom: 1}},
		{"largest size", prefs.Prefs{Width: maxSide, Height: maxSide, Zoom: 1}, prefs.Prefs{Width: maxSide, Height: maxSide, Zoom: 1}},
		{"too narrow", prefs.Prefs{Width: prefs.MinWidth - 1, Height: 600}, defaults},
		{"too short", prefs.Prefs{Width: 800, Height: prefs.MinHeight - 1}, defaults},
		{"too wide", prefs.Prefs{Width: maxSide + 1, Height: 600}, defaults},
		{"too tall", prefs.Prefs{Width: 800, Height: maxSide + 1}, defaults},
		{"negative size", prefs.Prefs{Width: -800, Height: -600}, defaults},
		{"huge size", prefs.Prefs{Width: math.MaxInt, Height: math.MinInt}, defaults},
		{"width only", prefs.Prefs{Width: 800}, defaults},
		{"negative position kept", prefs.Prefs{X: -100, Y: -maxSide, Placed: true}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, X: -100, Y: -maxSide, Placed: true, Zoom: 1}},
		{"far position kept", prefs.Prefs{X: maxSide, Y: maxSide, Placed: true}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, X: maxSide, Y: maxSide, Placed: true, Zoom: 1}},
		{"x too far right", prefs.Prefs{X: maxSide + 1, Y: 5, Placed: true}, defaults},
		{"x too far left", prefs.Prefs{X: -maxSide - 1, Y: 5, Placed: true}, defaults},
		{"y too far down", prefs.Prefs{X: 5, Y: maxSide + 1, Placed: true}, defaults},
		{"y too far up", prefs.Prefs{X: 5, Y: math.MinInt, Placed: true}, defaults},
		{"zoom at the bottom", prefs.Prefs{Zoom: prefs.MinZoom}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MinZoom}},
		{"zoom at the top", prefs.Prefs{Zoom: prefs.MaxZoom}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MaxZoom}},
		{"zoom too small", prefs.Prefs{Zoom: 0.1}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MinZoom}},
		{"zoom negative", prefs.Prefs{Zoom: -2}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MinZoom}},
		{"zoom too big", prefs.Prefs{Zoom: 10}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MaxZoom}},
		{"zoom +Inf", prefs.Prefs{Zoom: math.Inf(1)}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MaxZoom}},
		{"zoom -Inf", prefs.Prefs{Zoom: math.Inf(-1)}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MinZoom}},
		{"workspace and maximised kept", prefs.Prefs{Maximised: true, Workspace: "/ünï code"}, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: 1, Maximised: true, Workspace: "/ünï code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.Clean()
			if got != tt.want {
				t.Errorf("Clean(%+v)\n = %+v\nwant %+v", tt.in, got, tt.want)
			}
			if again := got.Clean(); again != got {
				t.Errorf("Clean is not idempotent: %+v then %+v", got, again)
			}
		})
	}
}

// TestCleanNaNZoom: NaN is not between MinZoom and MaxZoom; it becomes
// the default, and the prefs can be saved.
func TestCleanNaNZoom(t *testing.T) {
	got := prefs.Prefs{Zoom: math.NaN()}.Clean()
	if !(got.Zoom >= prefs.MinZoom && got.Zoom <= prefs.MaxZoom) {
		t.Errorf("Clean left zoom %v, want a zoom in [%v, %v]", got.Zoom, prefs.MinZoom, prefs.MaxZoom)
	}
	path := filepath.Join(t.TempDir(), "desktop.json")
	if err := prefs.Save(path, prefs.Prefs{Width: 800, Height: 600, Zoom: math.NaN()}); err != nil {
		t.Errorf("Save with a NaN zoom: %v", err)
	}
}

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		content string // written to the file; "<missing>" for no file
		want    prefs.Prefs
		wantErr bool
	}{
		{"missing", "<missing>", defaults, false},
		{"full", `{"width":900,"height":700,"x":-20,"y":40,"placed":true,"maximised":true,"zoom":1.5,"workspace":"/home/u/proj"}`,
			prefs.Prefs{Width: 900, Height: 700, X: -20, Y: 40, Placed: true, Maximised: true, Zoom: 1.5, Workspace: "/home/u/proj"}, false},
		{"empty object", `{}`, defaults, false},
		{"null", `null`, defaults, false},
		{"unknown fields", `{"width":900,"height":700,"colour":"blue","nested":{"a":[1,2]}}`, prefs.Prefs{Width: 900, Height: 700, Zoom: 1}, false},
		{"position at 0,0", `{"x":0,"y":0,"placed":true}`, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Placed: true, Zoom: 1}, false},
		{"size from a bigger screen", `{"width":40000,"height":700,"workspace":"/w"}`, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: 1, Workspace: "/w"}, false},
		{"tiny size", `{"width":10,"height":10}`, defaults, false},
		{"off-screen position", `{"x":99999,"y":10,"placed":true}`, defaults, false},
		{"zoom too big", `{"zoom":50}`, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MaxZoom}, false},
		{"zoom too small", `{"zoom":0.01}`, prefs.Prefs{Width: prefs.DefaultWidth, Height: prefs.DefaultHeight, Zoom: prefs.MinZoom}, false},
		{"empty file", ``, defaults, true},
		{"truncated", `{"width":900,"hei`, defaults, true},
		{"not JSON", "width=900\n", defaults, true},
		{"wrong type", `{"width":"wide"}`, defaults, true},
		// A file that half-parses must not give half its values.
		{"good then bad", `{"width":900,"height":700,"workspace":"/w","zoom":"big"}`, defaults, true},
		{"array", `[1,2,3]`, defaults, true},
		{"number too big for int", `{"width":1e40}`, defaults, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "desktop.json")
			if tt.content != "<missing>" {
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := prefs.Load(path)
			if got != tt.want {
				t.Errorf("Load = %+v, want %+v", got, tt.want)
			}
			if !tt.wantErr {
				if err != nil {
					t.Errorf("Load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Load gave no error")
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("the error does not name the file %s: %v", path, err)
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "desktop.json")
	if err := os.Mkdir(path, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	got, err := prefs.Load(path)
	if err == nil {
		t.Error("Load of a directory gave no error")
	} else if !strings.Contains(err.Error(), path) {
		t.Errorf("the error does not name %s: %v", path, err)
	}
	if got != defaults {
		t.Errorf("Load = %+v, want the defaults", got)
	}
}

func TestSaveRoundTrip(t *testing.T) {
	tests := []prefs.Prefs{
		{Width: 900, Height: 700, X: -20, Y: 40, Placed: true, Maximised: true, Zoom: 1.5, Workspace: "/home/u/proj"},
		{Width: prefs.MinWidth, Height: 16384, X: 0, Y: 0, Placed: true, Zoom: prefs.MinZoom},
		{Width: 1000, Height: 800, Zoom: 1.1 * 1.1 * 1.1, Workspace: `/a "quoted" \ path/ünïcødé/文件夹`},
		{Zoom: 1 / 1.1},
		{},
		// Out of bounds: saved clean.
		{Width: 1, Height: 1, X: 1 << 20, Y: 5, Placed: true, Zoom: 7, Workspace: "/w"},
	}
	for i, p := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "desktop.json")
			if err := prefs.Save(path, p); err != nil {
				t.Fatalf("Save: %v", err)
			}
			got, err := prefs.Load(path)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if got != p.Clean() {
				t.Errorf("Load after Save = %+v, want %+v", got, p.Clean())
			}
			// The file itself holds the clean values.
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var raw prefs.Prefs
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatalf("the file is not JSON: %v\n%s", err, b)
			}
			if raw != p.Clean() {
				t.Errorf("the file holds %+v, want %+v", raw, p.Clean())
			}
		})
	}
}

// onlyFile fails unless dir holds exactly the files named (no temporary
// file left behind).
func onlyFile(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func TestSaveMakesThePrivateDirectory(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "state", "hearth")
	path := prefs.File(dir)
	if err := prefs.Save(path, prefs.Prefs{Width: 800, Height: 600, Workspace: "/w"}); err != nil {
		t.Fatalf("Save: %v", err)
	}
	for _, d := range []string{filepath.Join(base, "state"), dir} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want a directory 0700", d, fi.Mode())
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want a file 0600", path, fi.Mode())
	}
	onlyFile(t, dir, "desktop.json")
}

// TestSaveReplacesByRename: an existing file (readable by others, or
// corrupt) is replaced by a new one, not rewritten in place: whoever has the
// old one open still reads it whole, and the new one is the user's only.
func TestSaveReplacesByRename(t *testing.T) {
	dir := t.TempDir()
	path := prefs.File(dir)
	old := `{"width":900,"height":700,"workspace":"/old"}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	want := prefs.Prefs{Width: 1000, Height: 800, Zoom: 1.2, Workspace: "/new"}
	if err := prefs.Save(path, want); err != nil {
		t.Fatalf("Save: %v", err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("Save rewrote the file in place; want a new file renamed over it")
	}
	if after.Mode().Perm() != 0o600 {
		t.Errorf("mode %v after Save, want 0600", after.Mode().Perm())
	}
	b := make([]byte, 1000)
	n, _ := f.ReadAt(b, 0)
	if string(b[:n]) != old {
		t.Errorf("the old file, still open, now reads %q", b[:n])
	}
	got, err := prefs.Load(path)
	if err != nil || got != want {
		t.Errorf("Load = %+v, %v; want %+v", got, err, want)
	}
	onlyFile(t, dir, "desktop.json")

	// A corrupt file is replaced too.
	if err := os.WriteFile(path, []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := prefs.Load(path); err == nil {
		t.Fatal("Load of garbage gave no error")
	}
	if err := prefs.Save(path, want); err != nil {
		t.Fatalf("Save over garbage: %v", err)
	}
	if got, err := prefs.Load(path); err != nil || got != want {
		t.Errorf("Load = %+v, %v; want %+v", got, err, want)
	}
	onlyFile(t, dir, "desktop.json")
}

func TestSaveFails(t *testing.T) {
	t.Run("directory under a file", func(t *testing.T) {
		base := t.TempDir()
		blocker := filepath.Join(base, "state")
		if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := prefs.Save(filepath.Join(blocker, "hearth", "desktop.json"), prefs.Prefs{}); err == nil {
			t.Fatal("Save gave no error")
		}
		onlyFile(t, base, "state")
	})
	t.Run("directory where the file goes", func(t *testing.T) {
		dir := t.TempDir()
		path := prefs.File(dir)
		if err := os.Mkdir(path, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, "inside"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := prefs.Save(path, prefs.Prefs{Width: 800, Height: 600})
		if err == nil {
			t.Fatal("Save over a directory gave no error")
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("the error does not name %s: %v", path, err)
		}
		onlyFile(t, dir, "desktop.json") // the directory, and no temporary file
		onlyFile(t, path, "inside")
	})
}

// TestConcurrentSaves: saves racing each other each write a whole file: the
// last rename wins, and what is left loads without error, with no
// temporary file behind.
func TestConcurrentSaves(t *testing.T) {
	dir := t.TempDir()
	path := prefs.File(dir)
	saved := map[prefs.Prefs]bool{}
	var all []prefs.Prefs
	for i := 0; i < 16; i++ {
		p := prefs.Prefs{Width: 600 + i, Height: 500 + i, X: i, Y: -i, Placed: true, Zoom: 1, Workspace: strings.Repeat(fmt.Sprint(i), 200)}
		saved[p] = true
		all = append(all, p)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(all)*10)
	for round := 0; round < 10; round++ {
		for _, p := range all {
			wg.Add(1)
			go func(p prefs.Prefs) {
				defer wg.Done()
				if err := prefs.Save(path, p); err != nil {
					errs <- err
				}
			}(p)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := prefs.Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !saved[got] {
		t.Errorf("Load = %+v, not one of the values saved", got)
	}
	onlyFile(t, dir, "desktop.json")
}
