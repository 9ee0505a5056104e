package checkpoint

import (
	"encoding/json"
	"path/filepath"
)

// pathKeys are the arguments of the built-in edit tools (and the usual
// names in other tools) that name a file.
var pathKeys = []string{"file_path", "path", "filepath", "filename", "source", "destination"}

// PathsIn returns the workspace-relative paths an edit tool's call names
// (its file_path or path argument), to keep in every snapshot of the
// session even if ignored: a file the agent itself changed is always
// restorable. edit false (not an edit tool) returns none. Arguments that
// are not an object, or paths outside root, are left out.
func PathsIn(args json.RawMessage, root string, edit bool) []string {
	if !edit || len(args) == 0 {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range pathKeys {
		v, ok := m[k].(string)
		if !ok || v == "" {
			continue
		}
		p := v
		if filepath.IsAbs(p) {
			rel, ok := relTo(root, filepath.Clean(p))
			if !ok || rel == "" {
				continue
			}
			p = rel
		}
		if rel := cleanRel(p); rel != "" {
			out = append(out, rel)
		}
	}
	return out
}
