package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	ref := filepath.Join(base, "ref")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root + "/src", ref, outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(root, "src/a.go"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link-out"))
	os.Symlink(outside, filepath.Join(root, "dir-out"))
	os.Symlink(filepath.Join(root, "src/a.go"), filepath.Join(root, "link-in"))
	os.Symlink(filepath.Join(base, "missing"), filepath.Join(root, "dangling"))
	ws, err := New(root, ref)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		access Access
		want   string // relative to root, or "" for refused
		rule   string
	}{
		{"src/a.go", Read, "src/a.go", ""},
		{"", Read, ".", ""},
		{".", Write, ".", ""},
		{"./src/../src/a.go", Read, "src/a.go", ""},
		{filepath.Join(root, "src/a.go"), Read, "src/a.go", ""},
		{"src/new/file.go", Write, "src/new/file.go", ""},
		{"link-in", Write, "src/a.go", ""},
		{"../outside/secret", Read, "", "outside the workspace"},
		{"src/../../outside/secret", Read, "", "outside the workspace"},
		{"/etc/passwd", Read, "", "outside the workspace"},
		{"/", Read, "", "outside the workspace"},
		{"link-out", Read, "", "resolves to"},
		{"dir-out/secret", Read, "", "resolves to"},
		{"dir-out/new", Write, "", "resolves to"},
		{"dangling", Write, "", "does not exist"},
		{"~/.ssh/id_rsa", Read, "", "~ is not expanded"},
		{"a\x00b", Read, "", "NUL"},
		{ref, Read, "ref", ""},
		{".hearth/config.toml", Write, "", "project config"},
		{".git/hooks/pre-commit", Write, "", "git's own files"},
		{".git/config", Write, "", "git's own files"},
		{".hearth/config.toml", Read, ".hearth/config.toml", ""},
		{".git/config", Read, ".git/config", ""},
		{".git/objects/ab", Write, "", "Ask the user"},
		{filepath.Join(ref, "x"), Write, "", "read-only"},
	}
	for _, tc := range tests {
		got, err := ws.Resolve(tc.path, tc.access)
		if tc.want == "" {
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.rule) {
				t.Errorf("%q (%s): got %q, %v; want refusal %q", tc.path, tc.access, got, err, tc.rule)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.path, err)
			continue
		}
		want := filepath.Join(ws.Root(), tc.want)
		if tc.want == "ref" {
			want, _ = filepath.EvalSymlinks(ref)
		}
		if got != want {
			t.Errorf("%q: got %s, want %s", tc.path, got, want)
		}
	}
	if _, err := New(filepath.Join(base, "nope")); err == nil {
		t.Error("missing root accepted")
	}
}

func TestWritable(t *testing.T) {
	ws, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := ws.Root()
	for p, ok := range map[string]bool{
		filepath.Join(root, "a.go"):                      true,
		filepath.Join(root, "src", "x", "y.go"):          true,
		filepath.Join(root, ".gitignore"):                true,
		filepath.Join(root, ".git", "HEAD"):              false,
		filepath.Join(root, ".git"):                      false,
		filepath.Join(root, "sub", ".git", "config"):     false,
		filepath.Join(root, ".GIT", "config"):            true,
		root:                                             false,
		filepath.Dir(root):                               false,
		root + "-sibling/a.go":                           false,
		"relative/a.go":                                  false,
		filepath.Join(root, ".hearth", "config.toml"):    false,
		filepath.Join(root, ".git", "hooks", "pre-push"): false,
		filepath.Join(root, ".git", "config"):            false,
	} {
		err := ws.Writable(p)
		if (err == nil) != ok {
			t.Errorf("Writable(%s) = %v, want allowed %v", p, err, ok)
		}
		var pe *PathError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("Writable(%s): %T, want a *PathError", p, err)
		}
	}
}

// Git's own files, at any depth, and .hearth at the root are refused for
// writing, whatever leads there; reading them stays allowed. Before issue
// 11 only .hearth, .git/hooks and .git/config were: writing .git/commondir
// (git then reads another config, core.fsmonitor included) or a .git file
// ("gitdir: …") where there was no repository made the user's next
// `git status` run the writer's program.
func TestProtected(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	for _, d := range []string{".git/hooks", "sub/.git", "vendor/lib", ".hearth", "nogit"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	must(os.WriteFile(filepath.Join(root, "vendor", "lib", ".git"), []byte("gitdir: ../../.git/modules/lib\n"), 0o644))
	must(os.Symlink(".git", filepath.Join(root, "gitlink")))
	must(os.Symlink(filepath.Join(root, ".git", "HEAD"), filepath.Join(root, "headlink")))
	must(os.Symlink("sub", filepath.Join(root, "sublink")))
	must(os.Symlink(".hearth", filepath.Join(root, "hearthlink")))
	// A repository whose .git is a symlink to a directory of another name.
	must(os.MkdirAll(filepath.Join(root, "linked", "gitdata"), 0o755))
	must(os.Symlink("gitdata", filepath.Join(root, "linked", ".git")))
	ws, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	const git, hearth = "git's own files", "Hearth's project config"
	for _, tc := range []struct {
		path string
		rule string // "" when the write is allowed
	}{
		{".git", git},
		{".git/commondir", git},
		{".git/HEAD", git},
		{".git/config", git},
		{".git/hooks/pre-commit", git},
		{".git/info/attributes", git},
		{".git/objects/ab/cdef", git},
		{"sub/.git", git},
		{"sub/.git/config", git},
		{"vendor/lib/.git", git},
		{"a/b/c/.git/modules/x/config", git},
		{"nogit/.git", git},
		{"gitlink/config", git},      // a symlink to .git
		{"headlink", git},            // a symlink to a file in .git
		{"sublink/.git/config", git}, // a symlink to a directory holding a repository
		{"linked/.git/config", git},  // as given, if not as resolved
		{".hearth", hearth},
		{".hearth/config.toml", hearth},
		{"hearthlink/config.toml", hearth},
		{"sub/.hearth/config.toml", hearth}, // a workspace inside this one (maybe trusted) has its own
		{".GIT/config", ""},                 // another name on Linux
		{".Git", ""},
		{".git.bak/config", ""},
		{"x.git", ""},
		{".gitignore", ""},
		{".gitmodules", ""},
		{".github/workflows/ci.yml", ""},
		{".hearthignore", ""},
		{"src/.gitkeep", ""},
	} {
		_, err := ws.Resolve(tc.path, Write)
		if tc.rule == "" {
			if err != nil {
				t.Errorf("write %s: %v", tc.path, err)
			}
			continue
		}
		var pe *PathError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.rule) || !strings.Contains(err.Error(), "Ask the user") {
			t.Errorf("write %s: got %v, want a refusal saying %q and to ask the user", tc.path, err, tc.rule)
		}
		if _, err := ws.Resolve(tc.path, Read); err != nil && !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("read %s: %v", tc.path, err)
		}
	}
	// The root itself is not protected, even when it is a .git directory
	// (a tool writing there is the user's choice).
	gws, err := New(filepath.Join(root, ".git"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gws.Resolve("HEAD", Write); err != nil {
		t.Errorf("a workspace rooted in .git: %v", err)
	}
}

// secretsHome makes a home directory with credentials and a workspace in
// it, as an attacker finds them: symlinks into the secret locations from
// the workspace, a secret location that is itself a symlink, a home
// directory given as a read-only directory.
func secretsHome(t *testing.T) (home, proj string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(base, "home")
	proj = filepath.Join(home, "proj")
	files := map[string]string{
		".ssh/id_rsa":           "PRIVATE KEY",
		".netrc":                "machine x password y",
		".docker/config.json":   "{}",
		".docker/other.json":    "{}",
		"vault/gpg/secring.gpg": "GPG",
		".bashrc":               "alias ll=ls",
		"proj/a.go":             "package a",
	}
	for p, c := range files {
		full := filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		".gnupg":       filepath.Join(home, "vault", "gpg"), // the secret location is a symlink
		"proj/key":     filepath.Join(home, ".ssh", "id_rsa"),
		"proj/ssh":     filepath.Join(home, ".ssh"),
		"proj/homelnk": home,
		"proj/netrc":   "../.netrc",
	} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	return home, proj
}

func TestWithSecrets(t *testing.T) {
	home, proj := secretsHome(t)
	plain, err := New(proj, home) // the home directory is a read-only directory
	if err != nil {
		t.Fatal(err)
	}
	secrets := SecretLocations(home)
	ws := plain.WithSecrets(secrets)
	hws, err := New(home) // a workspace rooted at home
	if err != nil {
		t.Fatal(err)
	}
	hws = hws.WithSecrets(secrets)
	const rule = "secret location the user has kept from tools"
	for _, tc := range []struct {
		ws     *Workspace
		path   string
		access Access
		want   string // resolved path, relative to home; "" when refused
	}{
		{ws, "a.go", Read, "proj/a.go"},
		{ws, "a.go", Write, "proj/a.go"},
		{ws, "new.go", Write, "proj/new.go"},
		{ws, filepath.Join(home, ".bashrc"), Read, ".bashrc"},
		{ws, filepath.Join(home, ".docker", "other.json"), Read, ".docker/other.json"},
		{ws, "../.ssh/id_rsa", Read, ""},
		{ws, filepath.Join(home, ".ssh", "id_rsa"), Read, ""},
		{ws, filepath.Join(home, ".ssh"), Read, ""},
		{ws, filepath.Join(home, ".ssh", "missing"), Read, ""},
		{ws, filepath.Join(home, ".netrc"), Read, ""},
		{ws, filepath.Join(home, ".docker", "config.json"), Read, ""},
		{ws, "key", Read, ""},
		{ws, "key", Write, ""},
		{ws, "ssh/id_rsa", Read, ""},
		{ws, "netrc", Read, ""},
		{ws, "homelnk/.ssh/id_rsa", Read, ""},
		{ws, filepath.Join(home, ".gnupg", "secring.gpg"), Read, ""},
		{ws, filepath.Join(home, "vault", "gpg", "secring.gpg"), Read, ""}, // where .gnupg leads
		{hws, ".ssh/id_rsa", Read, ""},
		{hws, ".ssh/authorized_keys", Write, ""},
		{hws, ".ssh", Write, ""},
		{hws, "vault/gpg/secring.gpg", Read, ""},
		{hws, "vault/gpg/new", Write, ""},
		{hws, "proj/key", Read, ""},
		{hws, ".bashrc", Read, ".bashrc"},
		{hws, "vault", Read, "vault"},
		{plain, "key", Read, ".ssh/id_rsa"}, // the workspace WithSecrets was called on is unchanged
	} {
		got, err := tc.ws.Resolve(tc.path, tc.access)
		if tc.want == "" {
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), rule) {
				t.Errorf("%s %s (root %s): got %q, %v; want a refusal saying %q", tc.access, tc.path, tc.ws.Rel(tc.ws.Root()), got, err, rule)
			}
			continue
		}
		if err != nil || got != filepath.Join(home, tc.want) {
			t.Errorf("%s %s: got %q, %v; want %s", tc.access, tc.path, got, err, filepath.Join(home, tc.want))
		}
	}

	// Readable and Writable, the checks on a path as the kernel names an
	// open file, refuse secret locations too.
	for _, p := range []string{filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(home, "vault", "gpg", "x"), filepath.Join(home, ".netrc")} {
		if err := ws.Readable(p); err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("Readable(%s) = %v", p, err)
		}
		if err := hws.Writable(p); err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("Writable(%s) = %v", p, err)
		}
		if !ws.IsSecret(p) {
			t.Errorf("IsSecret(%s) = false", p)
		}
	}
	for p, want := range map[string]bool{
		filepath.Join(proj, "a.go"):       true,
		filepath.Join(home, ".bashrc"):    true,
		filepath.Dir(home):                false,
		"/etc/passwd":                     false,
		proj + "/../x":                    false, // not clean
		"relative":                        false,
		filepath.Join(home, ".ssh", "x"):  false,
		filepath.Join(home, ".ssh") + "x": true, // another name
	} {
		if err := ws.Readable(p); (err == nil) != want {
			t.Errorf("Readable(%s) = %v, want allowed %v", p, err, want)
		}
	}
	if !ws.HoldsSecret(home) || !hws.HoldsSecret(home) || ws.HoldsSecret(proj) || plain.HoldsSecret(home) {
		t.Error("HoldsSecret: a walk of home must check for secrets, one of proj need not")
	}

	// The copy has the secrets, the original none; neither shares its
	// slices with the caller.
	if got := ws.Secrets(); len(got) != len(secrets) || got[0] != secrets[0] {
		t.Errorf("Secrets() = %v, want %v", got, secrets)
	}
	if len(plain.Secrets()) != 0 {
		t.Errorf("the original workspace has secrets: %v", plain.Secrets())
	}
	ws.Secrets()[0] = "/changed"
	secrets[0] = "/changed"
	if ws.Secrets()[0] == "/changed" || !ws.IsSecret(filepath.Join(home, ".ssh", "id_rsa")) {
		t.Error("the workspace shares its secrets with the caller")
	}
	if got := plain.WithSecrets([]string{"", filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh")}).Secrets(); len(got) != 1 {
		t.Errorf("empty and duplicate entries kept: %v", got)
	}
}

// A workspace the user chose inside a secret location is not refused, nor
// its files; the rest of the location still is.
func TestWithSecretsRootInside(t *testing.T) {
	home, _ := secretsHome(t)
	if err := os.MkdirAll(filepath.Join(home, ".ssh", "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".ssh", "proj"), filepath.Join(home, ".gnupg")} {
		ws, err := New(root, home)
		if err != nil {
			t.Fatal(err)
		}
		ws = ws.WithSecrets(SecretLocations(home))
		for _, p := range []string{".", "new.txt"} {
			for _, a := range []Access{Read, Write} {
				if _, err := ws.Resolve(p, a); err != nil {
					t.Errorf("root %s: %s %s: %v", root, a, p, err)
				}
			}
		}
		if _, err := ws.Resolve(filepath.Join(home, ".netrc"), Read); err == nil {
			t.Errorf("root %s: another secret location was read", root)
		}
	}
	ws, err := New(filepath.Join(home, ".ssh", "proj"), home)
	if err != nil {
		t.Fatal(err)
	}
	ws = ws.WithSecrets(SecretLocations(home))
	if _, err := ws.Resolve("../id_rsa", Read); err == nil || !strings.Contains(err.Error(), "secret location") {
		t.Errorf("the rest of the secret location holding the root: %v", err)
	}
}
