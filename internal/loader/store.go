package loader

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/session"
)

// storeEnv names the variables that choose the session store; they may hold
// a password, so Hearth takes them out of its environment (takeSecrets).
var storeEnv = []string{"HEARTH_DATABASE_URL", "PGPASSWORD"}

// StoreLocation says where sessions are kept: a PostgreSQL URL
// (HEARTH_DATABASE_URL, else the user's [store] url), or the path of a
// SQLite file ([store] url naming one, else the data directory's
// hearth.db). postgres is true for a URL.
func StoreLocation(cfg *config.Config, paths config.Paths, getenv func(string) string) (loc string, postgres bool, err error) {
	u := cfg.StoreURL(getenv)
	switch {
	case u == "":
		return paths.Database(), false, nil
	case session.IsPostgresURL(u):
		return u, true, nil
	case strings.Contains(u, "://"):
		scheme, _, _ := strings.Cut(u, "://")
		shown := "a " + scheme + ":// URL"
		if pu, err := url.Parse(u); err == nil {
			q := pu.Query()
			for k := range q {
				if strings.Contains(strings.ToLower(k), "password") {
					q.Set(k, "xxxxx")
				}
			}
			pu.RawQuery = q.Encode()
			shown = pu.Redacted()
		}
		return "", false, ConfigError{fmt.Errorf("the session store %s is not one Hearth knows: set HEARTH_DATABASE_URL or [store] url to a postgres:// URL, or to a SQLite file's path", shown)}
	}
	if rest, ok := strings.CutPrefix(u, "~/"); ok && paths.Home != "" {
		u = filepath.Join(paths.Home, rest)
	}
	if !filepath.IsAbs(u) {
		return "", false, ConfigError{fmt.Errorf("the session store %q is a relative path: give the SQLite file's absolute path (or a postgres:// URL)", u)}
	}
	return u, false, nil
}

// OpenStore opens the session store the configuration names (see
// StoreLocation). A PostgreSQL URL without a password takes PGPASSWORD's,
// as libpq does (Hearth has taken it out of its environment by then).
func OpenStore(ctx context.Context, cfg *config.Config, paths config.Paths, getenv func(string) string, log *slog.Logger) (session.Store, error) {
	loc, pg, err := StoreLocation(cfg, paths, getenv)
	if err != nil {
		return nil, err
	}
	if !pg {
		return session.Open(ctx, loc)
	}
	if pw := getenv("PGPASSWORD"); pw != "" {
		loc = withPassword(loc, pw)
	}
	st, err := session.OpenPostgres(ctx, loc)
	if err != nil {
		return nil, err
	}
	st.Log = log
	return st, nil
}

// withPassword gives a PostgreSQL URL without a password the one given
// (PGPASSWORD's, which pgx would have read had Hearth not taken it out of
// its environment): in the user part when there is one, else as the
// password parameter libpq's URLs accept.
func withPassword(loc, pw string) string {
	u, err := url.Parse(loc)
	if err != nil {
		return loc
	}
	q := u.Query()
	if q.Has("password") {
		return loc
	}
	if u.User != nil {
		if _, set := u.User.Password(); set {
			return loc
		}
		u.User = url.UserPassword(u.User.Username(), pw)
		return u.String()
	}
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	return u.String()
}
