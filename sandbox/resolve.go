package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RealPath returns the file that path p names, as the kernel would find it:
// p is taken relative to dir (absolute) unless it is absolute, and every
// symlink on the way is followed, with ".." applied after the symlink
// before it is resolved (so "link/.." is the parent of link's target, not
// the directory holding link). The part of p that does not exist yet is
// appended as written. With followLast false, a final component that is a
// symlink is not followed (rm, mv and ln act on the link itself), unless p
// ends in a slash.
func RealPath(dir, p string, followLast bool) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", errors.New("the path holds a NUL byte")
	}
	if p == "" {
		return "", errors.New("empty path")
	}
	if !filepath.IsAbs(p) {
		if !filepath.IsAbs(dir) {
			return "", fmt.Errorf("relative path %q without an absolute directory", p)
		}
		p = dir + string(filepath.Separator) + p
	}
	if strings.HasSuffix(p, "/") {
		followLast = true
	}
	rest := splitPath(p)
	cur := string(filepath.Separator)
	links := 0
	missing := false
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			missing = false // look again: what follows may exist
			continue
		}
		next := filepath.Join(cur, c)
		if missing {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			missing = true
			cur = next
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cannot resolve %s: %v", next, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 || (len(rest) == 0 && !followLast) {
			cur = next
			continue
		}
		if links++; links > 255 {
			return "", fmt.Errorf("too many levels of symbolic links in %s", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("cannot resolve %s: %v", next, err)
		}
		if filepath.IsAbs(target) {
			cur = string(filepath.Separator)
		}
		rest = append(splitPath(target), rest...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, string(filepath.Separator)) {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// Within reports whether p is dir or lies inside it. Both must be clean
// absolute paths.
func Within(p, dir string) bool { return within(p, dir) }
