package checkpoint

import (
	"bytes"
	"strings"
	"testing"
)

func TestTreeRoundTrip(t *testing.T) {
	h := strings.Repeat("ab", 32)
	in := []treeEntry{
		{Name: "z", Entry: Entry{Kind: File, Perm: 0o755, Size: 12, Hash: h}},
		{Name: "a b", Entry: Entry{Kind: Link, Perm: 0o777, Size: 3, Hash: h}},
		{Name: "dir\nnewline", Entry: Entry{Kind: Dir, Perm: 0o700, Hash: h}},
		{Name: "huge", Entry: Entry{Kind: Large, Perm: 0o644, Size: 1 << 40}},
	}
	out, err := decodeTree(encodeTree(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("got %d entries", len(out))
	}
	for i := 1; i < len(out); i++ {
		if out[i-1].Name >= out[i].Name {
			t.Fatal("entries not sorted")
		}
	}
	for _, e := range out {
		found := false
		for _, w := range in {
			if w == e {
				found = true
			}
		}
		if !found {
			t.Fatalf("entry %+v was not encoded", e)
		}
	}
}

func TestDecodeTreeRefusesDamage(t *testing.T) {
	h := strings.Repeat("0", 64)
	good := encodeTree([]treeEntry{{Name: "a", Entry: Entry{Kind: File, Hash: h}}})
	for name, data := range map[string][]byte{
		"no header":   []byte("garbage"),
		"truncated":   good[:len(good)-1],
		"bad kind":    bytes.Replace(good, []byte{'f'}, []byte{'q'}, 1),
		"slash name":  encodeTree([]treeEntry{{Name: "a/b", Entry: Entry{Kind: File, Hash: h}}}),
		"dotdot name": encodeTree([]treeEntry{{Name: "..", Entry: Entry{Kind: File, Hash: h}}}),
		"duplicate":   append(append([]byte{}, good...), good[len(treeMagic):]...),
		"bad hash":    encodeTree([]treeEntry{{Name: "a", Entry: Entry{Kind: File, Hash: "../../etc"}}}),
	} {
		if _, err := decodeTree(data); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// FuzzDecodeTree: a tree object read from the store never panics, and what
// decodes encodes back to the same bytes.
func FuzzDecodeTree(f *testing.F) {
	h := strings.Repeat("c", 64)
	f.Add(encodeTree([]treeEntry{{Name: "a", Entry: Entry{Kind: File, Perm: 0o644, Size: 3, Hash: h}}, {Name: "d", Entry: Entry{Kind: Dir, Perm: 0o755, Hash: h}}}))
	f.Add(encodeTree(nil))
	f.Add([]byte(treeMagic + "x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeTree(data)
		if err != nil {
			return
		}
		if again := encodeTree(entries); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding changed the tree:\n%q\n%q", data, again)
		}
	})
}

func TestIndexRoundTrip(t *testing.T) {
	ix := &index{At: 12345, Files: map[string]stat{
		"a/b.txt": {Size: 10, Mtime: -3, Ctime: 99, Ino: 7, Mode: 0o644, Hash: strings.Repeat("a", 64)},
		"c":       {Size: 0, Hash: strings.Repeat("b", 64)},
	}}
	got, err := decodeIndex(encodeIndex(ix))
	if err != nil {
		t.Fatal(err)
	}
	if got.At != ix.At || len(got.Files) != 2 || got.Files["a/b.txt"] != ix.Files["a/b.txt"] || got.Files["c"] != ix.Files["c"] {
		t.Fatalf("got %+v", got)
	}
}

// FuzzDecodeIndex: a damaged index is refused, never a panic.
func FuzzDecodeIndex(f *testing.F) {
	f.Add(encodeIndex(&index{At: 1, Files: map[string]stat{"x": {Size: 1, Hash: strings.Repeat("c", 64)}}}))
	f.Add([]byte(indexMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := decodeIndex(data)
		if err != nil {
			return
		}
		if _, err := decodeIndex(encodeIndex(ix)); err != nil {
			t.Fatalf("re-encoded index refused: %v", err)
		}
	})
}
