package loader

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Checkpoints are kept in the data directory, as the user's [checkpoints]
// says; a project cannot turn them off.
func TestCheckpointsConfig(t *testing.T) {
	tests := []struct {
		name, user, project string
		dataInWorkspace     bool
		off                 string // in CheckpointsOff ("": on)
		max                 int64
		warn                string // in the one warning expected
	}{
		{name: "on by default"},
		{name: "the size cap", user: "[checkpoints]\nmax_file_size = 1024", max: 1024},
		{name: "off in the user's file", user: "[checkpoints]\nenabled = false", off: "[checkpoints] enabled = false in "},
		{name: "not off in the project's", project: "[checkpoints]\nenabled = false", warn: "sets [checkpoints] enabled = false"},
		{name: "off when the data directory is in the workspace", dataInWorkspace: true, off: "is inside the workspace", warn: "Checkpoints are off"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ws := setup(t, tc.user, tc.project, nil)
			if tc.dataInWorkspace {
				o.Paths.DataDir = filepath.Join(ws, ".data")
			}
			var warns []string
			o.Warn = func(s string) { warns = append(warns, s) }
			o.NoStore = true
			l, err := Load(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			c := l.Config
			if tc.off == "" {
				if c.NoCheckpoints || c.Checkpoints != o.Paths.DataDir || l.CheckpointsOff() != "" {
					t.Errorf("want checkpoints in %s: %q %v %q", o.Paths.DataDir, c.Checkpoints, c.NoCheckpoints, l.CheckpointsOff())
				}
			} else if !c.NoCheckpoints || !strings.Contains(l.CheckpointsOff(), tc.off) {
				t.Errorf("want checkpoints off (%q): %v %q", tc.off, c.NoCheckpoints, l.CheckpointsOff())
			}
			if c.CheckpointMaxFileSize != tc.max {
				t.Errorf("max file size %d, want %d", c.CheckpointMaxFileSize, tc.max)
			}
			switch {
			case tc.warn == "" && len(warns) > 0:
				t.Errorf("warnings: %q", warns)
			case tc.warn != "" && (len(warns) != 1 || !strings.Contains(warns[0], tc.warn)):
				t.Errorf("warnings %q, want one with %q", warns, tc.warn)
			}
		})
	}
}

// The agent's checkpoint store is under the data directory's checkpoints/,
// one per workspace.
func TestCheckpointsInTheDataDirectory(t *testing.T) {
	o, ws := setup(t, "", "", nil)
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	entries, err := os.ReadDir(filepath.Join(o.Paths.DataDir, "checkpoints"))
	if err != nil || len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), filepath.Base(ws)+"-") {
		t.Fatalf("the checkpoint store: %v %v", entries, err)
	}
}
