// Package builtin assembles Hearth's built-in tools for one session: the
// file tools (read_file, read_many_files, write_file, list_directory, glob,
// grep_search), edit and run_shell_command, all bounded by one workspace.
package builtin

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/edit"
	"github.com/hearth-agent/hearth/tool/fs"
	"github.com/hearth-agent/hearth/tool/shell"
)

// Options configure the built-in tools.
type Options struct {
	// Workspace bounds every path and command. Required.
	Workspace *sandbox.Workspace
	// Seen records what the model has read; one per session (nil: new).
	Seen *tool.Seen
	// Fixer, if set, helps edit correct a search string that missed.
	Fixer edit.Fixer
	// Shell configures run_shell_command; its Workspace is set from above.
	Shell shell.Config
	// Files bounds what the file tools read and return.
	Files fs.Limits
	Log   *slog.Logger
}

// Set is the built-in tools of one session. Close it when the session ends
// (the shell tool keeps a private temp directory).
type Set struct {
	Tools []tool.Tool
	shell *shell.Tool
}

// New builds the tools.
func New(o Options) (*Set, error) {
	if o.Workspace == nil {
		return nil, fmt.Errorf("built-in tools: no workspace")
	}
	if o.Seen == nil {
		o.Seen = tool.NewSeen()
	}
	o.Shell.Workspace = o.Workspace
	if o.Shell.Logger == nil {
		o.Shell.Logger = o.Log
	}
	sh, err := shell.New(o.Shell)
	if err != nil {
		return nil, fmt.Errorf("built-in tools: %w", err)
	}
	ts := fs.Tools(o.Workspace, o.Seen, o.Files)
	ts = append(ts, edit.New(o.Workspace, o.Seen, edit.Options{Fixer: o.Fixer}), sh)
	return &Set{Tools: ts, shell: sh}, nil
}

// Registry returns a registry holding the tools.
func (s *Set) Registry() (*tool.Registry, error) { return tool.NewRegistry(s.Tools...) }

// Sandbox says how shell commands are confined on this system.
func (s *Set) Sandbox() sandbox.Status { return s.shell.Sandbox() }

// Close releases what the tools hold.
func (s *Set) Close() error { return s.shell.Close() }

var _ io.Closer = (*Set)(nil)
