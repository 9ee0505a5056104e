package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Kind says what a path of a snapshot is.
type Kind byte

// The kinds of entry.
const (
	// File is a regular file whose content is kept.
	File Kind = 'f'
	// Link is a symbolic link; its target is kept (as a blob), never
	// followed.
	Link Kind = 'l'
	// Dir is a directory (its entries are a tree of their own).
	Dir Kind = 'd'
	// Large is a regular file over the size cap: its size is recorded, its
	// content is not, and it cannot be restored.
	Large Kind = 'x'
)

// Entry is the state of one path in a snapshot.
type Entry struct {
	Kind Kind
	// Perm holds the permission bits (and setuid, setgid, sticky).
	Perm fs.FileMode
	// Size is a file's size in bytes.
	Size int64
	// Hash names the content (a file's bytes, a link's target, a
	// directory's tree); empty for Large.
	Hash string
}

// Same reports whether two entries are the same state of a path: the same
// kind, mode and content.
func (e Entry) Same(o Entry) bool {
	if e.Kind != o.Kind || e.Perm != o.Perm {
		return false
	}
	if e.Kind == Large {
		return e.Size == o.Size
	}
	return e.Hash == o.Hash
}

// treeEntry is one named entry of a directory's tree.
type treeEntry struct {
	Name string
	Entry
}

// The encoding of a tree object: "HTREE1\n", then each entry, sorted by
// name: kind (1 byte), perm (uvarint), size (uvarint), hash (1 byte of
// length, then the hex hash), name (uvarint length, then bytes).
const treeMagic = "HTREE1\n"

// maxName bounds a name in a tree (file systems allow 255 bytes).
const maxName = 4096

func encodeTree(entries []treeEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	var b bytes.Buffer
	b.WriteString(treeMagic)
	var n [binary.MaxVarintLen64]byte
	for _, e := range entries {
		b.WriteByte(byte(e.Kind))
		b.Write(n[:binary.PutUvarint(n[:], uint64(e.Perm))])
		b.Write(n[:binary.PutUvarint(n[:], uint64(e.Size))])
		b.WriteByte(byte(len(e.Hash)))
		b.WriteString(e.Hash)
		b.Write(n[:binary.PutUvarint(n[:], uint64(len(e.Name)))])
		b.WriteString(e.Name)
	}
	return b.Bytes()
}

// errCorrupt is wrapped by the errors of a tree that cannot be decoded.
var errCorrupt = errors.New("corrupt checkpoint tree")

// decodeTree reads a tree object. It never panics: a damaged object is an
// error.
func decodeTree(data []byte) ([]treeEntry, error) {
	if !bytes.HasPrefix(data, []byte(treeMagic)) {
		return nil, fmt.Errorf("%w: no header", errCorrupt)
	}
	r := bytes.NewReader(data[len(treeMagic):])
	var out []treeEntry
	prev := ""
	for r.Len() > 0 {
		k, _ := r.ReadByte()
		kind := Kind(k)
		switch kind {
		case File, Link, Dir, Large:
		default:
			return nil, fmt.Errorf("%w: unknown kind %q", errCorrupt, k)
		}
		perm, err := binary.ReadUvarint(r)
		if err != nil || perm > uint64(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) {
			return nil, fmt.Errorf("%w: bad mode", errCorrupt)
		}
		size, err := binary.ReadUvarint(r)
		if err != nil || size > 1<<62 {
			return nil, fmt.Errorf("%w: bad size", errCorrupt)
		}
		hl, err := r.ReadByte()
		if err != nil || int(hl) > r.Len() {
			return nil, fmt.Errorf("%w: bad hash", errCorrupt)
		}
		h := make([]byte, hl)
		r.Read(h)
		if (kind == Large) != (hl == 0) || !validHash(string(h), kind == Large) {
			return nil, fmt.Errorf("%w: bad hash", errCorrupt)
		}
		nl, err := binary.ReadUvarint(r)
		if err != nil || nl == 0 || nl > maxName || int(nl) > r.Len() {
			return nil, fmt.Errorf("%w: bad name", errCorrupt)
		}
		name := make([]byte, nl)
		r.Read(name)
		s := string(name)
		if s == "." || s == ".." || strings.ContainsAny(s, "/\x00") || (len(out) > 0 && s <= prev) {
			return nil, fmt.Errorf("%w: bad name %q", errCorrupt, s)
		}
		prev = s
		out = append(out, treeEntry{Name: s, Entry: Entry{Kind: kind, Perm: fs.FileMode(perm), Size: int64(size), Hash: string(h)}})
	}
	return out, nil
}

// validHash reports whether h is a hex SHA-256 (or empty, when allowed).
func validHash(h string, empty bool) bool {
	if h == "" {
		return empty
	}
	if len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Files is a snapshot flattened: every file, link and large file by its
// slash-separated path relative to the workspace root, and every directory
// (Kind Dir, Hash its tree).
type Files map[string]Entry

// Change is one path that differs between two snapshots (or a snapshot and
// the workspace): From is its state in the first (nil: absent), To in the
// second.
type Change struct {
	Path string `json:"path"`
	From *Entry `json:"-"`
	To   *Entry `json:"-"`
}

// Action says what a change does to the path, seen from From to To:
// "create", "delete", "modify" (content), "chmod" (mode only) or "retype"
// (a file became a link, a directory…).
func (c Change) Action() string {
	switch {
	case c.From == nil:
		return "create"
	case c.To == nil:
		return "delete"
	case c.From.Kind != c.To.Kind:
		return "retype"
	case c.From.Hash == c.To.Hash && c.From.Size == c.To.Size:
		return "chmod"
	}
	return "modify"
}

// Diff lists the paths whose state differs from a to b, directories
// included when they appear, go or change mode, sorted by path.
func Diff(a, b Files) []Change {
	var out []Change
	for p, ea := range a {
		eb, ok := b[p]
		switch {
		case !ok:
			ea := ea
			out = append(out, Change{Path: p, From: &ea})
		case ea.Kind == Dir && eb.Kind == Dir:
			if ea.Perm != eb.Perm {
				ea, eb := ea, eb
				out = append(out, Change{Path: p, From: &ea, To: &eb})
			}
		case !ea.Same(eb):
			ea, eb := ea, eb
			out = append(out, Change{Path: p, From: &ea, To: &eb})
		}
	}
	for p, eb := range b {
		if _, ok := a[p]; !ok {
			eb := eb
			out = append(out, Change{Path: p, To: &eb})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// parentDirs returns the directories above p, outermost first ("a/b/c" →
// "a", "a/b").
func parentDirs(p string) []string {
	var out []string
	for d := path.Dir(p); d != "." && d != "/"; d = path.Dir(d) {
		out = append(out, d)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
