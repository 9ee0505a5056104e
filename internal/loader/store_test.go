package loader

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/session"
)

func TestStoreLocation(t *testing.T) {
	paths := config.Paths{Home: "/home/me", DataDir: "/home/me/.local/share/hearth"}
	tests := []struct {
		name, env, file string
		want            string
		pg              bool
		err             string
	}{
		{"default: the SQLite file", "", "", "/home/me/.local/share/hearth/hearth.db", false, ""},
		{"the environment", "postgres://u:p@db/hearth", "", "postgres://u:p@db/hearth", true, ""},
		{"postgresql:// too", "postgresql://db/hearth", "", "postgresql://db/hearth", true, ""},
		{"the environment before the file", "postgres://env/h", "postgres://file/h", "postgres://env/h", true, ""},
		{"the file", "", "postgres://file/h", "postgres://file/h", true, ""},
		{"a SQLite path in the file", "", "~/sessions/h.db", "/home/me/sessions/h.db", false, ""},
		{"an absolute SQLite path", "/srv/hearth.db", "", "/srv/hearth.db", false, ""},
		{"a relative path", "", "h.db", "", false, "relative path"},
		{"another database", "mysql://root:hunter2@db/h", "", "", false, "not one Hearth knows"},
		{"a password in the query", "mysql://db/h?password=hunter2", "", "", false, "not one Hearth knows"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Store: config.Store{URL: tc.file}}
			getenv := func(k string) string {
				if k == "HEARTH_DATABASE_URL" {
					return tc.env
				}
				return ""
			}
			got, pg, err := StoreLocation(cfg, paths, getenv)
			if tc.err != "" {
				var ce ConfigError
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &ce) {
					t.Fatalf("err %v, want a ConfigError with %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("the password is in the message: %v", err)
				}
				return
			}
			if err != nil || got != tc.want || pg != tc.pg {
				t.Errorf("got %q %v %v, want %q %v", got, pg, err, tc.want, tc.pg)
			}
		})
	}
}

func TestOpenStoreSQLite(t *testing.T) {
	dir := t.TempDir()
	paths := config.Paths{Home: dir, DataDir: dir}
	st, err := OpenStore(context.Background(), &config.Config{}, paths, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if sq, ok := st.(*session.SQLite); !ok || sq.Path() != filepath.Join(dir, "hearth.db") {
		t.Errorf("opened %T", st)
	}
}

func TestOpenStoreUnreachablePostgres(t *testing.T) {
	// A port nothing listens on: the error names the database, not the
	// password, and says what failed.
	getenv := func(k string) string {
		if k == "HEARTH_DATABASE_URL" {
			return "postgres://hearth:hunter2@127.0.0.1:1/hearth?connect_timeout=2"
		}
		return ""
	}
	_, err := OpenStore(context.Background(), &config.Config{}, config.Paths{}, getenv, nil)
	if err == nil || !strings.Contains(err.Error(), `database "hearth" on 127.0.0.1:1`) || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("err %v", err)
	}
}

func TestWithPassword(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://hearth@db/h", "postgres://hearth:pw@db/h"},
		{"postgres://hearth:own@db/h", "postgres://hearth:own@db/h"},
		{"postgres://db/h", "postgres://db/h?password=pw"},
		{"postgres://db/h?user=hearth&sslmode=disable", "postgres://db/h?password=pw&sslmode=disable&user=hearth"},
		{"postgres://db/h?password=own", "postgres://db/h?password=own"},
	}
	for _, tc := range tests {
		if got := withPassword(tc.in, "pw"); got != tc.want {
			t.Errorf("withPassword(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
