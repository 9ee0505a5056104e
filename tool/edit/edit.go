// Package edit is the edit tool: it replaces text in a file, the way a
// model most often changes code, and is built to forgive the mistakes small
// local models make while never changing what the model did not mean.
//
// The model gives old_string, copied from the file, and new_string. The
// matching engine (match.Find, pure and separate from the file handling) tries,
// in order: the exact text; the same lines with whitespace differences;
// the same lines indented differently (new_string is then re-indented into
// the file's indentation); and a bounded fuzzy match that must stand out
// from every other passage. Copied line numbers and over-escaped text are
// repaired. A miss returns the most similar passage with its line numbers,
// and may first ask a Fixer (a model) for a corrected old_string.
//
// The tool refuses a file that changed since the model last read it,
// replacements that hold omission placeholders ("// ... rest unchanged"),
// and paths outside the workspace. It writes atomically, keeping the
// file's line endings, byte order mark and mode, and returns a unified
// diff.
package edit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/edit/internal/match"
	"github.com/hearth-agent/hearth/tool/internal/atomicfile"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

// Name is the tool's name, as the model sees it.
const Name = "edit"

// DefaultMaxFileSize is the largest file the tool edits by default.
const DefaultMaxFileSize = 32 << 20

// Options configure the tool. The zero value works.
type Options struct {
	// Fixer, when set, is asked once for a corrected old_string when
	// old_string matches nowhere.
	Fixer Fixer
	// MaxFileSize is the largest file edited; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Threshold is the similarity a fuzzy match needs; 0 means
	// DefaultThreshold. Set it above 1 to turn fuzzy matching off.
	Threshold float64
	// MaxWork bounds fuzzy matching; 0 means DefaultMaxWork.
	MaxWork int
	// MaxOutputDiff is the longest diff included in the model's output;
	// longer ones are summarised (the Display keeps the whole diff). 0
	// means 3000 bytes.
	MaxOutputDiff int
}

// Tool is the edit tool. It is safe for concurrent use: edits of one file
// are serialised.
type Tool struct {
	*tool.Defined[Args] // Spec, Kind, Run and Describe

	ws   *sandbox.Workspace
	seen *tool.Seen
	opts Options

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

var (
	_ tool.Tool      = (*Tool)(nil)
	_ tool.Describer = (*Tool)(nil)
)

// New returns the edit tool for a workspace. seen is the session's record
// of what the model has read (nil: no staleness check).
func New(ws *sandbox.Workspace, seen *tool.Seen, opts Options) *Tool {
	t := &Tool{ws: ws, seen: seen, opts: opts, locks: map[string]*sync.Mutex{}}
	d := def
	d.Describe = t.describe
	t.Defined = tool.Define(d, t.run)
	return t
}

// def is the tool's definition, but for Describe (each tool's own).
var def = tool.Def[Args]{Name: Name, Kind: tool.Edit, Description: description, Schema: json.RawMessage(editSchema),
	Tune: func(s *jsonschema.Schema) {
		s.Properties["expected_replacements"].Minimum = jsonschema.Ptr(1.0)
		// Unknown fields are ignored, not refused: small models add
		// some, and nothing is lost by reading past them.
		s.AdditionalProperties = nil
	}}

const description = "Replace text in a file. old_string must be copied exactly from the file (no line numbers), " +
	"with 2-3 lines of context so it matches one place. new_string is the full replacement: never write " +
	"placeholders like \"// ... rest of code\". To create a file, give old_string \"\". " +
	"Read the file before editing it."

// Args are the tool's arguments.
type Args struct {
	FilePath             string `json:"file_path" jsonschema:"path of the file, relative to the workspace"`
	OldString            string `json:"old_string" jsonschema:"exact text to replace; \"\" to create a new file"`
	NewString            string `json:"new_string" jsonschema:"the text to put in its place"`
	ExpectedReplacements int    `json:"expected_replacements,omitempty" jsonschema:"how many places to replace (default 1)"`
}

// check refuses arguments the schema lets through but the tool cannot
// use, and fills in the default.
func (a *Args) check() error {
	if strings.TrimSpace(a.FilePath) == "" {
		return errors.New("file_path is empty: give the path of the file to edit")
	}
	if a.ExpectedReplacements < 0 {
		return errors.New("expected_replacements must be 1 or more")
	}
	if a.ExpectedReplacements == 0 {
		a.ExpectedReplacements = 1
	}
	return nil
}

// describe is a line for an approval prompt.
func (t *Tool) describe(a Args) string {
	if a.check() != nil {
		return "edit (invalid arguments)"
	}
	p := a.FilePath
	if t.ws != nil {
		if abs, err := t.ws.Resolve(p, sandbox.Write); err == nil {
			p = t.ws.Rel(abs)
		}
	}
	if a.OldString == "" {
		return fmt.Sprintf("create %s (%d line%s)", p, match.CountLines(a.NewString), match.Plural(match.CountLines(a.NewString)))
	}
	o, n := match.CountLines(a.OldString), match.CountLines(a.NewString)
	s := fmt.Sprintf("edit %s (replace %d line%s with %d)", p, o, match.Plural(o), n)
	if a.ExpectedReplacements > 1 {
		s = fmt.Sprintf("edit %s (replace %d line%s with %d, in %d places)", p, o, match.Plural(o), n, a.ExpectedReplacements)
	}
	return s
}

func (t *Tool) lock(path string) func() {
	t.mu.Lock()
	l, ok := t.locks[path]
	if !ok {
		l = &sync.Mutex{}
		t.locks[path] = l
	}
	t.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// run does one call, its arguments decoded (Run, made by tool.Define).
func (t *Tool) run(ctx context.Context, _ tool.Call, a Args) (tool.Result, error) {
	if err := a.check(); err != nil {
		return tool.Result{}, err
	}
	for _, arg := range []struct {
		name string
		n    int
	}{{"old_string", len(a.OldString)}, {"new_string", len(a.NewString)}} {
		if int64(arg.n) > t.maxSize() {
			return tool.Result{}, fmt.Errorf("%s is %s, over the %s the edit tool handles: make smaller edits", arg.name, safefile.Size(int64(arg.n)), safefile.Size(t.maxSize()))
		}
	}
	path, err := t.ws.Resolve(a.FilePath, sandbox.Write)
	if err != nil {
		return tool.Result{}, err
	}
	rel := t.ws.Rel(path)
	defer t.lock(path)()

	// Read as read_file reads: never a named pipe or a device (refused
	// without being opened, so nothing blocks), never more than the limit.
	raw, fi, err := t.read(ctx, path)
	var nr *safefile.NotRegularError
	var tl *safefile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if a.OldString != "" {
			return tool.Result{}, fmt.Errorf("%s does not exist. Check the path (list_directory or glob find files); to create a new file, call edit with old_string \"\"", rel)
		}
		if line, ok := match.FindPlaceholder("", a.NewString, path); ok {
			return tool.Result{}, fmt.Errorf("new_string has a placeholder line %q instead of real code, and %s does not exist yet: write out the whole file", line, rel)
		}
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		return t.create(ctx, path, rel, a)
	case errors.As(err, &nr) && nr.IsDir():
		return tool.Result{}, fmt.Errorf("%s is a directory: give the path of a file", rel)
	case errors.As(err, &nr):
		return tool.Result{}, fmt.Errorf("%s is %s, not a regular file: the edit tool changes regular text files only", rel, safefile.Kind(nr.Mode))
	case errors.As(err, &tl):
		return tool.Result{}, fmt.Errorf("%s is %s, larger than the %s the edit tool handles: it is not read, and not changed. Ask the user to change it", rel, safefile.Size(tl.Size), safefile.Size(tl.Max))
	case err != nil:
		return tool.Result{}, fmt.Errorf("%s: %v", rel, err)
	}
	if match.LooksBinary(raw) {
		return tool.Result{}, fmt.Errorf("%s is a binary file; the edit tool changes text files only", rel)
	}
	if t.seen != nil {
		if err := t.seen.Check(path, raw); err != nil {
			return tool.Result{}, fmt.Errorf("%s changed since you last read it (by you with another tool, or by someone else): read it again, then edit", rel)
		}
	}
	content, enc := match.Decode(raw)
	old, new := match.NormalizeNewlines(a.OldString), match.NormalizeNewlines(a.NewString)
	if old == "" {
		if content != "" {
			return tool.Result{}, fmt.Errorf("old_string is empty, but %s already exists and is not empty. To change it, put the exact text to replace in old_string; to replace all of it, use write_file", rel)
		}
		return t.write(ctx, path, rel, raw, content, enc, &match.Match{Spans: []match.Span{{Replacement: new, Line: 1, EndLine: 1}}, Strategy: match.Exact}, "", fi)
	}
	if old == new {
		return tool.Result{}, errors.New("old_string and new_string are the same, so there is nothing to change: put the new text in new_string")
	}
	if line, ok := match.FindPlaceholder(old, new, path); ok {
		return tool.Result{}, fmt.Errorf("new_string has a placeholder line %q instead of real code: the edit would replace the code it stands for with that comment. "+
			"Write out the complete code in new_string, or make old_string cover only the lines you change", line)
	}
	opts := match.MatchOptions{Count: a.ExpectedReplacements, Threshold: t.opts.Threshold, MaxWork: t.opts.MaxWork}
	if t.opts.Threshold > 1 {
		opts.Upto = match.Indentation
	}
	m, err := match.Find(content, old, new, opts)
	note := ""
	if err != nil {
		var me *match.MatchError
		if t.opts.Fixer == nil || !errors.As(err, &me) || me.Kind != match.NotFound {
			return tool.Result{}, fmt.Errorf("%s: %w", rel, err)
		}
		fixed, ferr := t.fix(ctx, rel, content, old, new, me, opts)
		if ferr != nil {
			return tool.Result{}, fmt.Errorf("%s: %w", rel, err)
		}
		m, note = fixed, "old_string did not match; the fixer model corrected it"
	}
	if !enc.CRLF() && strings.Contains(content, "\r\n") {
		match.KeepCRLF(content, m)
	}
	return t.write(ctx, path, rel, raw, content, enc, m, note, fi)
}

// read reads the file at path (resolved) through safefile, within the
// size limit: from the editor when the turn has its file system
// (tool.WithFiles).
func (t *Tool) read(ctx context.Context, path string) ([]byte, fs.FileInfo, error) {
	return safefile.ReadThrough(ctx, t.ws, path, t.maxSize())
}

func (t *Tool) maxSize() int64 {
	if t.opts.MaxFileSize > 0 {
		return t.opts.MaxFileSize
	}
	return DefaultMaxFileSize
}

// fix asks the fixer for a corrected old_string and checks its answer: it
// must match as many places as wanted, all inside the excerpt shown.
func (t *Tool) fix(ctx context.Context, rel, content, old, new string, me *match.MatchError, opts match.MatchOptions) (*match.Match, error) {
	start, end, ok := match.FixWindow(content, me.Closest)
	if !ok {
		return nil, errNoFix
	}
	fixed, err := t.opts.Fixer.FixOldString(ctx, FixRequest{Path: rel, Excerpt: content[start:end], OldString: old, NewString: new})
	if err != nil {
		return nil, err
	}
	fixed = match.NormalizeNewlines(fixed)
	if strings.HasSuffix(old, "\n") && !strings.HasSuffix(fixed, "\n") {
		fixed += "\n"
	}
	if fixed == old || fixed == new {
		return nil, errNoFix
	}
	opts.Upto = match.Indentation
	opts.NoRepair = true
	m, err := match.Find(content, fixed, new, opts)
	if err != nil {
		return nil, err
	}
	for _, s := range m.Spans {
		if s.Start < start || s.End > end {
			return nil, errNoFix
		}
		// It must be the passage old_string resembles, not another one
		// the excerpt shows.
		if c := me.Closest; c != nil && (s.EndLine < c.Line || s.Line > c.Line+len(c.Text)-1) {
			return nil, errNoFix
		}
	}
	if me.Closest == nil && !match.Resembles(old, fixed) {
		return nil, errNoFix
	}
	return m, nil
}

// create writes a new file (old_string was ""). Missing directories are
// made below the workspace root by WriteBeneath.
func (t *Tool) create(ctx context.Context, path, rel string, a Args) (tool.Result, error) {
	data := []byte(a.NewString)
	if err := t.writeFile(ctx, path, data, 0o644); err != nil {
		return tool.Result{}, fmt.Errorf("writing %s: %w", rel, err)
	}
	if t.seen != nil {
		t.seen.Record(path, data)
	}
	diff, st := match.NewFileDiff(rel, match.NormalizeNewlines(a.NewString))
	return tool.Result{
		Output:  fmt.Sprintf("Created %s (%d line%s).", rel, st.Added, match.Plural(st.Added)),
		Display: diff,
	}, nil
}

// write applies the match, writes the file and reports.
func (t *Tool) write(ctx context.Context, path, rel string, raw []byte, content string, enc match.Encoding, m *match.Match, note string, fi fs.FileInfo) (tool.Result, error) {
	after := m.Apply(content)
	if after == content {
		return tool.Result{}, errors.New("the edit changes nothing: the file already holds new_string there")
	}
	data := enc.Encode(after)
	if n := int64(len(data)); n > t.maxSize() {
		return tool.Result{}, fmt.Errorf("%s would be %s after the edit, over the %s the edit tool handles: it was not changed. Make smaller edits", rel, safefile.Size(n), safefile.Size(t.maxSize()))
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	// The file must not have changed while the edit was worked out (a
	// fixer call can take a while).
	if now, _, err := t.read(ctx, path); err != nil || !bytes.Equal(now, raw) {
		return tool.Result{}, fmt.Errorf("%s changed while the edit was being made: read it again, then edit", rel)
	}
	if err := t.writeFile(ctx, path, data, fi.Mode().Perm()); err != nil {
		return tool.Result{}, fmt.Errorf("writing %s: %w", rel, err)
	}
	if t.seen != nil {
		t.seen.Record(path, data)
	}
	diff, st := match.Diff(rel, content, m.Spans)
	return tool.Result{Output: t.summary(rel, m, note, diff, st), Display: diff}, nil
}

// testHookBeforeWrite, when set (tests), runs between the checks of the
// path and the write: where a racing process would swap a directory.
var testHookBeforeWrite func(path string)

// writeFile writes path (resolved and checked) atomically, by file
// descriptors below the workspace root rather than by the path checked: a
// directory swapped for a symlink since cannot lead outside the workspace,
// and the protected paths are checked again where the write really goes.
// When the turn has an editor's file system (tool.WithFiles), the path is
// checked the same way and the editor writes it.
func (t *Tool) writeFile(ctx context.Context, path string, data []byte, perm fs.FileMode) error {
	if testHookBeforeWrite != nil {
		testHookBeforeWrite(path)
	}
	return atomicfile.WriteThrough(ctx, t.ws.Root(), path, data, perm, t.ws.Writable)
}

func (t *Tool) summary(rel string, m *match.Match, note, diff string, st match.DiffStat) string {
	var b strings.Builder
	places := make([]string, 0, len(m.Spans))
	for i, s := range m.Spans {
		if i == 10 {
			places = append(places, "…")
			break
		}
		if s.EndLine > s.Line {
			places = append(places, fmt.Sprintf("%d-%d", s.Line, s.EndLine))
		} else {
			places = append(places, fmt.Sprint(s.Line))
		}
	}
	fmt.Fprintf(&b, "Edited %s: replaced line%s %s", rel, match.Plural(len(m.Spans)+m.Spans[0].EndLine-m.Spans[0].Line), strings.Join(places, ", "))
	if len(m.Spans) > 1 {
		fmt.Fprintf(&b, " (%d places)", len(m.Spans))
	}
	fmt.Fprintf(&b, ", +%d -%d lines.", st.Added, st.Removed)
	if m.Strategy != match.Exact || m.Repair != match.NoRepair || note != "" {
		var why []string
		if note != "" {
			why = append(why, note)
		}
		if m.Repair != match.NoRepair {
			why = append(why, m.Repair.String())
		}
		switch m.Strategy {
		case match.Whitespace:
			why = append(why, "matched ignoring whitespace differences")
		case match.Indentation:
			why = append(why, "matched with different indentation; new_string was re-indented to fit the file")
		case match.Fuzzy:
			why = append(why, fmt.Sprintf("old_string was not exact; replaced the most similar passage (%d%% similar), check the diff", int(m.Score*100)))
		}
		b.WriteString(" Note: " + strings.Join(why, "; ") + ".")
	}
	limit := t.opts.MaxOutputDiff
	if limit <= 0 {
		limit = 3000
	}
	if diff != "" && len(diff) <= limit {
		b.WriteString("\n" + diff)
	}
	return strings.TrimRight(b.String(), "\n")
}
