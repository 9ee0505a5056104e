package sandbox

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestSecretLocations(t *testing.T) {
	home := "/home/u"
	got := SecretLocations(home, "~/.config/hearth", "~", ".hearth-data", "/etc/keys/", "/home/u/.ssh", "", "~/")
	for _, want := range []string{"/home/u/.ssh", "/home/u/.aws", "/home/u/.netrc", "/home/u/.config/hearth", "/home/u", "/home/u/.hearth-data", "/etc/keys"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s missing from %v", want, got)
		}
	}
	seen := map[string]bool{}
	for _, p := range got {
		if seen[p] || !filepath.IsAbs(p) || filepath.Clean(p) != p {
			t.Errorf("%q: duplicate, relative or not clean", p)
		}
		seen[p] = true
	}
	// Without a home directory, only absolute extras are kept.
	if got := SecretLocations("", "~/.ssh", "rel", "/abs"); !slices.Equal(got, []string{"/abs"}) {
		t.Errorf("no home: %v", got)
	}
}

func TestIsSecret(t *testing.T) {
	secrets := []string{"/home/u/.ssh", "/home/u/.netrc"}
	for p, want := range map[string]bool{
		"/home/u/.ssh":          true,
		"/home/u/.ssh/id_rsa":   true,
		"/home/u/.netrc":        true,
		"/home/u/.netrc2":       false,
		"/home/u/.sshx/id_rsa":  false,
		"/home/u":               false,
		"/home/u/proj/.ssh/key": false,
	} {
		if got := IsSecret(p, secrets); got != want {
			t.Errorf("IsSecret(%s) = %v, want %v", p, got, want)
		}
	}
}
