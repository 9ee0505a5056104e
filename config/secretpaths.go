package config

import (
	"path/filepath"
	"strings"
)

// SecretLocations returns the paths that tools and commands must not read,
// beyond the usual credential locations the sandbox knows itself
// (sandbox.SecretLocations): Hearth's own config directory (config.toml,
// secrets.toml, the API token) and data directory (hearth.db: every
// session), then the config's secret_paths, then the profile's (a project's
// file can only add to these).
//
// Hearth's directories are absolute, and given a second time with symlinks
// resolved when that differs (a check of a resolved path must match). An
// entry of secret_paths that starts with "~/", or is relative (taken from
// the home directory), is made absolute with Paths.Home when it is known
// and left as written otherwise, for sandbox.SecretLocations to expand;
// a project's relative entries were taken from the workspace when it was
// read. Duplicates are dropped; the paths need not exist.
func (c *Config) SecretLocations(p Profile) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, d := range []string{c.paths.ConfigDir, c.paths.DataDir} {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		add(abs)
		add(realPath(abs))
	}
	home := c.paths.Home
	for _, s := range append(append([]string(nil), c.SecretPaths...), p.SecretPaths...) {
		switch {
		case s == "":
			continue
		case filepath.IsAbs(s):
		case home == "":
			add(s)
			continue
		case s == "~":
			s = home
		case strings.HasPrefix(s, "~/"):
			s = filepath.Join(home, s[2:])
		case strings.HasPrefix(s, "~"): // ~user: not expanded
			add(s)
			continue
		default:
			s = filepath.Join(home, s)
		}
		s = filepath.Clean(s)
		add(s)
		add(realPath(s))
	}
	return out
}

// realPath resolves the symlinks in the longest existing prefix of abs.
func realPath(abs string) string {
	rest := ""
	cur := abs
	for {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
