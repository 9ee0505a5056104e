package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseFlags: the folder comes as FOLDER or --workspace (once), help
// goes to its writer, mistakes are errors.
func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		ws      string
		model   string
		wantErr string
	}{
		{args: nil},
		{args: []string{"proj"}, ws: "proj"},
		{args: []string{"--workspace", "proj"}, ws: "proj"},
		{args: []string{"--workspace", "proj", "proj"}, ws: "proj"},
		{args: []string{"--workspace", "a", "b"}, wantErr: "given twice"},
		{args: []string{"a", "b"}, wantErr: "one folder at most"},
		{args: []string{"-model", "qwen3:4b", "x"}, ws: "x", model: "qwen3:4b"},
		{args: []string{"--bogus"}, wantErr: "not defined"},
	} {
		var help bytes.Buffer
		f, err := parseFlags(c.args, &help)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%q: err %v, want %q", c.args, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", c.args, err)
		case f.workspace != c.ws || f.provider.Model != c.model:
			t.Errorf("%q: workspace %q model %q, want %q %q", c.args, f.workspace, f.provider.Model, c.ws, c.model)
		}
		if help.Len() > 0 {
			t.Errorf("%q: help written: %s", c.args, help.String())
		}
	}
	var help bytes.Buffer
	if _, err := parseFlags([]string{"--help"}, &help); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "hearth-desktop [flags] [FOLDER]") || !strings.Contains(help.String(), "-workspace") {
		t.Errorf("--help: %v\n%s", err, help.String())
	}
}

// TestAbsDir: a folder given relative to where the launch was, checked.
func TestAbsDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := absDir("p", dir); err != nil || got != filepath.Join(dir, "p") {
		t.Errorf("absDir(p) = %q, %v", got, err)
	}
	if got, err := absDir(filepath.Join(dir, "p")+"/", "/elsewhere"); err != nil || got != filepath.Join(dir, "p") {
		t.Errorf("absDir(abs/) = %q, %v", got, err)
	}
	if _, err := absDir("f", dir); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("absDir(file) = %v", err)
	}
	if _, err := absDir("missing", dir); err == nil {
		t.Error("absDir(missing) = nil")
	}
}

// TestPermission and TestClip: the workspace's trust in words, and cut
// notification text.
func TestPermission(t *testing.T) {
	for _, c := range []struct {
		offered, free bool
		want          string
	}{{false, false, "never"}, {false, true, "never"}, {true, false, "ask"}, {true, true, "allowed"}} {
		if got := permission(c.offered, c.free); got != c.want {
			t.Errorf("permission(%v, %v) = %q, want %q", c.offered, c.free, got, c.want)
		}
	}
	if got := clip("héllo wörld", 5); got != "héll…" {
		t.Errorf("clip = %q", got)
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip = %q", got)
	}
}
