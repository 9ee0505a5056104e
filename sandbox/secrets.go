package sandbox

import (
	"path/filepath"
	"strings"
)

// homeSecrets are where, below a home directory, people keep credentials
// that a model's command or tool must never read: keys, cloud and
// registry logins, password stores. Functional configuration that merely
// may hold a token (~/.npmrc, ~/.gitconfig) is not listed: hiding it breaks
// everyday builds; add it with the profile's secret list where it matters.
var homeSecrets = []string{
	".ssh",
	".gnupg",
	".aws",
	".azure",
	".config/gcloud",
	".config/gh",
	".netrc",
	".git-credentials",
	".docker/config.json",
	".kube",
	".password-store",
	".pypirc",
	".cargo/credentials",
	".cargo/credentials.toml",
	".local/share/keyrings",
	// PostgreSQL's password file, service file and client keys (a shared
	// session store's login).
	".pgpass",
	".pg_service.conf",
	".postgresql",
}

// SecretLocations returns the absolute, cleaned paths that commands and the
// file tools may not read: the usual credential locations below home (when
// home is not empty), then extra (Hearth's own config and data directories,
// and the user's configured list; relative entries are taken from home and
// a leading ~/ is expanded). Duplicates are dropped; paths need not exist.
func SecretLocations(home string, extra ...string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home == "" {
				return
			}
			p = filepath.Join(home, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/"))
		} else if !filepath.IsAbs(p) {
			if home == "" {
				return
			}
			p = filepath.Join(home, p)
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	if home != "" {
		for _, s := range homeSecrets {
			add(filepath.Join(home, s))
		}
	}
	for _, s := range extra {
		add(s)
	}
	return out
}

// IsSecret reports whether p (absolute, symlinks resolved) is one of
// secrets or lies below one.
func IsSecret(p string, secrets []string) bool {
	for _, s := range secrets {
		if within(p, s) {
			return true
		}
	}
	return false
}
