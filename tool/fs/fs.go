// Package fs holds the built-in file tools: read_file, read_many_files,
// write_file, list_directory, glob and grep_search. Names and argument shapes
// follow Gemini CLI's, so that models and people who know those tools know
// these. Every path goes through the workspace's rules (sandbox.Workspace),
// and searches honour .gitignore like git and ripgrep do.
package fs

import (
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// Limits bound what a tool reads and returns, to protect small context
// windows and memory. Zero fields take the defaults.
type Limits struct {
	// ReadLines is how many lines read_file returns when no limit is given.
	ReadLines int
	// ReadBytes caps read_file's output.
	ReadBytes int
	// MaxFileSize is the largest file read or searched, the largest
	// content write_file writes, and the largest existing file it
	// replaces (it reads the old content first).
	MaxFileSize int64
	// MaxResults caps glob's files and grep_search's matching lines.
	MaxResults int
}

func (l Limits) withDefaults() Limits {
	if l.ReadLines <= 0 {
		l.ReadLines = 500
	}
	if l.ReadBytes <= 0 {
		l.ReadBytes = 64 << 10
	}
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = 20 << 20
	}
	if l.MaxResults <= 0 {
		l.MaxResults = 200
	}
	return l
}

// Tools returns the file tools for one session: ws bounds every path, seen
// records what the model has read (the edit tool checks it).
func Tools(ws *sandbox.Workspace, seen *tool.Seen, lim Limits) []tool.Tool {
	e := &env{ws: ws, seen: seen, lim: lim.withDefaults()}
	return []tool.Tool{
		tool.Define(readFileDef, e.readFile),
		tool.Define(readManyDef, e.readMany),
		tool.Define(writeFileDef, e.writeFile),
		tool.Define(listDirDef, e.listDir),
		tool.Define(globDef, e.glob),
		tool.Define(grepDef, e.grep),
	}
}

type env struct {
	ws   *sandbox.Workspace
	seen *tool.Seen
	lim  Limits
}
