package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSecretLocations(t *testing.T) {
	home := t.TempDir()
	real := filepath.Join(home, "real-config")
	os.MkdirAll(real, 0o700)
	os.Symlink(real, filepath.Join(home, ".config"))
	env := map[string]string{"HOME": home}
	paths, err := DefaultPaths(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(paths.ConfigDir, 0o700)
	os.WriteFile(paths.UserFile(), []byte(`secret_paths = ["~/.npmrc", "work/creds", "/srv/keys", ""]
[profiles.p]
secret_paths = ["~/.config/other"]
`), 0o600)
	ws := filepath.Join(home, "src", "ws")
	os.MkdirAll(filepath.Join(ws, ".hearth"), 0o755)
	os.WriteFile(ProjectFile(ws), []byte(`secret_paths = [".env.production"]`), 0o644)
	c, err := Load(paths, ws)
	if err != nil {
		t.Fatal(err)
	}
	got := c.SecretLocations(c.Profiles["p"])
	want := []string{
		filepath.Join(home, ".config", "hearth"), filepath.Join(real, "hearth"), // the config dir, and what it resolves to
		filepath.Join(home, ".local", "share", "hearth"),
		filepath.Join(home, ".npmrc"), filepath.Join(home, "work", "creds"), "/srv/keys",
		filepath.Join(ws, ".env.production"),
		filepath.Join(home, ".config", "other"), filepath.Join(real, "other"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}

	// HEARTH_HOME: one directory, once; relative made absolute.
	env = map[string]string{"HOME": home, "HEARTH_HOME": "hh"}
	paths, _ = DefaultPaths(func(k string) string { return env[k] })
	c, _ = Load(paths, "")
	abs, _ := filepath.Abs("hh")
	if got := c.SecretLocations(Profile{SecretPaths: []string{"~/.x"}}); !slices.Equal(got, []string{abs, filepath.Join(home, ".x")}) {
		t.Errorf("HEARTH_HOME: %q", got)
	}

	// Without a known home, ~ is left for sandbox.SecretLocations.
	c = &Config{SecretPaths: []string{"~/.npmrc", "rel"}}
	if got := c.SecretLocations(Profile{}); !slices.Equal(got, []string{"~/.npmrc", "rel"}) {
		t.Errorf("no home: %q", got)
	}
}
