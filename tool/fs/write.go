package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/atomicfile"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

type writeFileArgs struct {
	FilePath string `json:"file_path" jsonschema:"the file, relative to the workspace root"`
	Content  string `json:"content" jsonschema:"the whole new content of the file"`
}

// testHookBeforeWrite, when set (tests), runs between the check of the
// path and the write: where a racing process would swap a directory.
var testHookBeforeWrite func(path string)

var writeFileDef = tool.Def[writeFileArgs]{Schema: json.RawMessage(writeFileSchema), Name: "write_file", Kind: tool.Edit,
	Description: "Create a file, or replace a whole file, with the given content. To change part of a file use edit.",
	Describe: func(a writeFileArgs) string {
		return fmt.Sprintf("write %s (%d lines)", a.FilePath, strings.Count(a.Content, "\n")+1)
	}}

func (e *env) writeFile(ctx context.Context, _ tool.Call, a writeFileArgs) (tool.Result, error) {
	if strings.TrimSpace(a.FilePath) == "" {
		return tool.Result{}, errors.New("file_path is empty")
	}
	if n := int64(len(a.Content)); n > e.lim.MaxFileSize {
		return tool.Result{}, fmt.Errorf("content is %s, over the %s limit of write_file: write a smaller file (split it, or generate it with a command)", safefile.Size(n), safefile.Size(e.lim.MaxFileSize))
	}
	p, err := e.ws.Resolve(a.FilePath, sandbox.Write)
	if err != nil {
		return tool.Result{}, err
	}
	content := []byte(a.Content)
	// The old content is read (to keep its line endings, and to check it
	// is what the model last read), the way read_file reads: never a
	// named pipe or a device, never more than the limit (from the
	// editor, when the turn has its file system).
	old, _, err := safefile.ReadThrough(ctx, e.ws, p, e.lim.MaxFileSize)
	existed := err == nil
	var nr *safefile.NotRegularError
	var tl *safefile.TooLargeError
	switch {
	case existed:
		if err := e.seen.Check(p, old); err != nil {
			return tool.Result{}, err
		}
		content = matchStyle(old, content)
	case errors.Is(err, fs.ErrNotExist):
		// Missing directories are made by WriteBeneath, below the root.
	case errors.As(err, &nr) && nr.IsDir():
		return tool.Result{}, fmt.Errorf("%s is a directory: give the path of a file", a.FilePath)
	case errors.As(err, &nr):
		return tool.Result{}, fmt.Errorf("%s is %s, not a regular file: write_file only creates and replaces regular files. Write to another path, or ask the user to remove it", a.FilePath, safefile.Kind(nr.Mode))
	case errors.As(err, &tl):
		return tool.Result{}, fmt.Errorf("%s already exists and is %s, over the %s limit of the file tools: write_file does not replace a file this large, "+
			"which it cannot read to check against what you last read. It is left as it is: write to another path, or ask the user to move or shrink it",
			a.FilePath, safefile.Size(tl.Size), safefile.Size(tl.Max))
	default:
		return tool.Result{}, fmt.Errorf("%s: %w", a.FilePath, err)
	}
	if err := ctx.Err(); err != nil {
		return tool.Result{}, err
	}
	if testHookBeforeWrite != nil {
		testHookBeforeWrite(p)
	}
	// By file descriptors below the root, not by the path just checked:
	// a directory swapped for a symlink since cannot lead outside, and
	// the protected paths are checked again where the write really goes
	// (through the editor, when the turn has its file system: checked
	// the same way first).
	if err := atomicfile.WriteThrough(ctx, e.ws.Root(), p, content, 0o644, e.ws.Writable); err != nil {
		return tool.Result{}, fmt.Errorf("writing %s: %w", a.FilePath, err)
	}
	e.seen.Record(p, content)
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return tool.Result{Output: fmt.Sprintf("%s %s (%d lines).", verb, e.ws.Rel(p), bytes.Count(content, []byte("\n"))+boolInt(len(content) > 0 && content[len(content)-1] != '\n'))}, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// matchStyle gives new content the line endings and byte-order mark of the
// file it replaces, so that a rewrite does not show every line as changed.
func matchStyle(old, content []byte) []byte {
	bom := []byte("\ufeff")
	if bytes.HasPrefix(old, bom) && !bytes.HasPrefix(content, bom) {
		content = append(append([]byte(nil), bom...), content...)
	}
	crlf := bytes.Count(old, []byte("\r\n"))
	lf := bytes.Count(old, []byte("\n"))
	if crlf > 0 && crlf*2 > lf && !bytes.Contains(content, []byte("\r\n")) {
		content = bytes.ReplaceAll(content, []byte("\n"), []byte("\r\n"))
	}
	return content
}
