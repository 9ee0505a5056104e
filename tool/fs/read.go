package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

// maxLineLen cuts absurdly long lines (minified code) in what is returned.
const maxLineLen = 2000

type readFileArgs struct {
	FilePath string `json:"file_path" jsonschema:"the file, relative to the workspace root"`
	Offset   int    `json:"offset,omitempty" jsonschema:"0-based line to start at, for large files"`
	Limit    int    `json:"limit,omitempty" jsonschema:"number of lines to read"`
}

var readFileDef = tool.Def[readFileArgs]{Schema: json.RawMessage(readFileSchema), Name: "read_file", Kind: tool.ReadOnly,
	Description: "Read a text file. Large files come in parts: use offset and limit to read more.",
	Describe:    func(a readFileArgs) string { return "read " + a.FilePath }}

func (e *env) readFile(ctx context.Context, _ tool.Call, a readFileArgs) (tool.Result, error) {
	if a.Offset < 0 || a.Limit < 0 {
		return tool.Result{}, errors.New("offset and limit must not be negative")
	}
	p, data, err := e.load(ctx, a.FilePath)
	if err != nil {
		return tool.Result{}, err
	}
	if kind := binaryKind(data); kind != "" {
		return tool.Result{Output: fmt.Sprintf("%s is %s (%d bytes); its content is not shown.", e.ws.Rel(p), kind, len(data))}, nil
	}
	e.seen.Record(p, data)
	return tool.Result{Output: e.window(e.ws.Rel(p), data, a.Offset, a.Limit)}, nil
}

// load resolves and reads a file for reading, within the size limit. It
// never blocks: a named pipe, a socket or a device is refused without
// being opened (see safefile.Open), and a file over the limit is not read.
// With an editor's file system in ctx (tool.WithFiles), a file in the
// workspace is read from it, after the same checks.
func (e *env) load(ctx context.Context, path string) (string, []byte, error) {
	p, err := e.ws.Resolve(path, sandbox.Read)
	if err != nil {
		return "", nil, err
	}
	data, _, err := safefile.ReadThrough(ctx, e.ws, p, e.lim.MaxFileSize)
	if err != nil {
		return "", nil, e.readErr(path, err)
	}
	return p, data, nil
}

// readErr says why the file path (as the model gave it) cannot be read,
// and what to do instead.
func (e *env) readErr(path string, err error) error {
	var nr *safefile.NotRegularError
	var tl *safefile.TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: use list_directory or glob to find the right path", path)
	case errors.As(err, &nr) && nr.IsDir():
		return fmt.Errorf("%s is a directory: use list_directory", path)
	case errors.As(err, &nr):
		return fmt.Errorf("%s is %s, not a regular file: the file tools read regular files only", path, safefile.Kind(nr.Mode))
	case errors.As(err, &tl):
		return fmt.Errorf("%s is %s (%d bytes), over the %s limit of the file tools: use grep_search to find what you need in it", path, safefile.Size(tl.Size), tl.Size, safefile.Size(tl.Max))
	}
	return err
}

// window returns the lines [offset, offset+limit) of data, cut to the byte
// limit, with a note saying how to read on when not everything is shown.
func (e *env) window(name string, data []byte, offset, limit int) string {
	if limit == 0 {
		limit = e.lim.ReadLines
	}
	text := strings.TrimPrefix(string(data), "\ufeff")
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	total := len(lines)
	if total == 0 {
		return fmt.Sprintf("%s is empty.", name)
	}
	if offset >= total {
		return fmt.Sprintf("%s has %d lines; offset %d is past the end.", name, total, offset)
	}
	end := min(total, offset+limit)
	var b strings.Builder
	cut := false
	for i := offset; i < end; i++ {
		line := lines[i]
		if len(line) > maxLineLen {
			line = line[:maxLineLen] + " … [line cut]\n"
		}
		if b.Len()+len(line) > e.lim.ReadBytes {
			end, cut = i, true
			break
		}
		b.WriteString(line)
	}
	if offset == 0 && end == total && !cut {
		return b.String()
	}
	if end == offset {
		return fmt.Sprintf("line %d of %s is too long to show.", offset+1, name)
	}
	note := fmt.Sprintf("[%s: lines %d-%d of %d", name, offset+1, end, total)
	if end < total {
		note += fmt.Sprintf("; read on with offset=%d", end)
	}
	return note + "]\n" + b.String()
}

// binaryKind says what a file is if it is not text: an image, a PDF, or
// binary data. "" means text.
func binaryKind(data []byte) string {
	head := data[:min(len(data), 8192)]
	ct := http.DetectContentType(head)
	switch {
	case strings.HasPrefix(ct, "image/"):
		return "an image (" + ct + ")"
	case ct == "application/pdf":
		return "a PDF document"
	case strings.HasPrefix(ct, "audio/") || strings.HasPrefix(ct, "video/"):
		return "a media file (" + ct + ")"
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "a binary file"
	}
	if !utf8.Valid(head) {
		// Allow a multi-byte character cut at the end of the sample.
		if cut := len(head) - 3; cut <= 0 || !utf8.Valid(head[:cut]) {
			return "a binary file (not UTF-8 text)"
		}
	}
	return ""
}

type readManyArgs struct {
	Paths   []string `json:"paths" jsonschema:"files or glob patterns (e.g. src/**/*.go), relative to the workspace root"`
	Exclude []string `json:"exclude,omitempty" jsonschema:"glob patterns to leave out"`
}

var readManyDef = tool.Def[readManyArgs]{Schema: json.RawMessage(readManySchema), Name: "read_many_files", Kind: tool.ReadOnly,
	Description: "Read several text files at once, given paths or glob patterns. Ignored (.gitignore) and binary files are skipped."}

func (e *env) readMany(ctx context.Context, _ tool.Call, a readManyArgs) (tool.Result, error) {
	if len(a.Paths) == 0 {
		return tool.Result{}, errors.New("give at least one path or pattern in paths")
	}
	files := map[string]bool{}
	for _, pat := range a.Paths {
		if !hasMeta(pat) {
			p, err := e.ws.Resolve(pat, sandbox.Read)
			if err != nil {
				return tool.Result{}, err
			}
			files[p] = true
			continue
		}
		matches, err := e.globFiles(ctx, pat, "")
		if err != nil {
			return tool.Result{}, err
		}
		for _, m := range matches {
			files[m.path] = true
		}
	}
	var names []string
	for p := range files {
		rel := e.ws.Rel(p)
		excluded := false
		for _, ex := range a.Exclude {
			if ok, _ := doublestar.Match(ex, rel); ok {
				excluded = true
			}
		}
		if !excluded {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	var skipped []string
	budget := e.lim.ReadBytes * 2
	for i, p := range names {
		if err := ctx.Err(); err != nil {
			return tool.Result{}, err
		}
		if b.Len() >= budget {
			fmt.Fprintf(&b, "\n[stopped after %d of %d files: the output limit was reached; read the rest separately]\n", i, len(names))
			break
		}
		_, data, err := e.load(ctx, p)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", e.ws.Rel(p), err))
			continue
		}
		if kind := binaryKind(data); kind != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", e.ws.Rel(p), kind))
			continue
		}
		e.seen.Record(p, data)
		fmt.Fprintf(&b, "--- %s ---\n%s", e.ws.Rel(p), e.window(e.ws.Rel(p), data, 0, 0))
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
	}
	if len(names) == 0 {
		return tool.Result{Output: "No files matched."}, nil
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "\n[skipped: %s]\n", strings.Join(skipped, "; "))
	}
	return tool.Result{Output: b.String()}, nil
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[{") }
