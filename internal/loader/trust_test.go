package loader

import (
	"context"
	"errors"
	"github.com/hearth-agent/hearth/config"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/session"
)

// trustProject is a project file whose effect shows whether it was read as
// a trusted workspace's (its system prompt applies) or not (ignored).
const trustProject = "[profiles.headless]\nsystem_prompt = \"PROJECT PROMPT\"\n"

// withStore opens the SQLite store Load would open for o, lets fn write
// records in it, and closes it.
func withStore(t *testing.T, o Options, fn func(ctx context.Context, st *session.SQLite)) {
	t.Helper()
	st, err := session.Open(context.Background(), o.Paths.Database())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(context.Background(), st)
}

// storedTrust reads the store's record of root ("" and false when there
// is none).
func storedTrust(t *testing.T, o Options, root string) (session.Trust, bool, bool) {
	t.Helper()
	var trust session.Trust
	var chosen, found bool
	withStore(t, o, func(ctx context.Context, st *session.SQLite) {
		w, err := st.Workspace(ctx, root)
		switch {
		case errors.Is(err, session.ErrNotFound):
		case err != nil:
			t.Fatal(err)
		default:
			trust, chosen, found = w.Trust, w.TrustChosen, true
		}
	})
	return trust, chosen, found
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTrustPrecedence: --trust over the user's stored choice over the
// question (whose answer is remembered) over untrusted; a record the user
// did not choose is no choice; the project's file is read as the trust
// says.
func TestTrustPrecedence(t *testing.T) {
	errAsk := errors.New("the user closed the question")
	chosen := func(tr session.Trust) func(context.Context, *session.SQLite, string) {
		return func(ctx context.Context, st *session.SQLite, root string) {
			// Chosen for the project's file as it is (as every way of
			// choosing records it).
			if _, err := st.AddWorkspace(ctx, session.Workspace{Path: root, Trust: tr, ConfigHash: config.ProjectHash(root)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	touched := func(ctx context.Context, st *session.SQLite, root string) {
		if _, err := st.TouchWorkspace(ctx, root); err != nil {
			t.Fatal(err)
		}
	}
	// A record that says trusted but was never chosen (as an import of
	// another store may write): no choice.
	unchosenTrusted := func(ctx context.Context, st *session.SQLite, root string) {
		if _, _, err := st.ImportWorkspace(ctx, session.Workspace{Path: root, Trust: session.TrustTrusted, TrustChosen: false}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		flag    string
		source  string // Options.TrustSource
		record  func(context.Context, *session.SQLite, string)
		answer  session.Trust // AskTrust's answer ("": no AskTrust)
		askErr  error
		noStore bool

		want       session.Trust
		wantChosen bool
		wantSource string
		wantAsked  int
		wantErr    string
		// the store's record after Load ("" for none).
		stored       session.Trust
		storedChosen bool
	}{
		{name: "nothing: untrusted", want: session.TrustUntrusted, wantSource: "not trusted"},
		{name: "the flag", flag: "trusted", want: session.TrustTrusted, wantChosen: true, wantSource: "--trust, for this run"},
		{name: "the flag, spelled otherwise", flag: " Read_Only ", want: session.TrustReadOnly, wantChosen: true, wantSource: "--trust"},
		{name: "the flag's source", flag: "trusted", source: "HEARTH_TRUST", want: session.TrustTrusted, wantChosen: true, wantSource: "HEARTH_TRUST"},
		{name: "a bad flag", flag: "sure", wantErr: "--trust"},
		{name: "the flag over the stored choice", flag: "read-only", record: chosen(session.TrustTrusted), answer: session.TrustTrusted,
			want: session.TrustReadOnly, wantChosen: true, wantSource: "--trust", stored: session.TrustTrusted, storedChosen: true},
		{name: "the flag is not remembered", flag: "trusted", answer: session.TrustReadOnly,
			want: session.TrustTrusted, wantChosen: true, wantSource: "--trust"},
		{name: "the stored choice: trusted", record: chosen(session.TrustTrusted),
			want: session.TrustTrusted, wantChosen: true, wantSource: "as you chose it", stored: session.TrustTrusted, storedChosen: true},
		{name: "the stored choice over the question", record: chosen(session.TrustReadOnly), answer: session.TrustTrusted,
			want: session.TrustReadOnly, wantChosen: true, wantSource: "as you chose it", stored: session.TrustReadOnly, storedChosen: true},
		{name: "untrusted, chosen: not asked again", record: chosen(session.TrustUntrusted), answer: session.TrustTrusted,
			want: session.TrustUntrusted, wantChosen: true, stored: session.TrustUntrusted, storedChosen: true},
		{name: "a record not chosen, no question", record: touched,
			want: session.TrustUntrusted, stored: session.TrustUntrusted},
		{name: "a record not chosen that says trusted is no choice", record: unchosenTrusted,
			want: session.TrustUntrusted, stored: session.TrustTrusted},
		{name: "a record not chosen: asked, and remembered", record: touched, answer: session.TrustReadOnly, wantAsked: 1,
			want: session.TrustReadOnly, wantChosen: true, wantSource: "as you chose it", stored: session.TrustReadOnly, storedChosen: true},
		{name: "no record: asked, and remembered", answer: session.TrustTrusted, wantAsked: 1,
			want: session.TrustTrusted, wantChosen: true, stored: session.TrustTrusted, storedChosen: true},
		{name: "asked, untrusted: remembered as chosen", answer: session.TrustUntrusted, wantAsked: 1,
			want: session.TrustUntrusted, wantChosen: true, stored: session.TrustUntrusted, storedChosen: true},
		{name: "the question fails: its error, nothing remembered", record: touched, answer: session.TrustTrusted, askErr: errAsk, wantAsked: 1,
			wantErr: errAsk.Error(), stored: session.TrustUntrusted},
		{name: "no store: never asked", noStore: true, answer: session.TrustTrusted, want: session.TrustUntrusted},
		{name: "no store: the flag", noStore: true, flag: "trusted", want: session.TrustTrusted, wantChosen: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ws := setup(t, "", trustProject, nil)
			root := realPath(t, ws)
			// The workspace is named through a symlink: the store's
			// record, and the question, are of the real folder.
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(ws, link); err != nil {
				t.Fatal(err)
			}
			o.Workspace = link
			if tc.record != nil {
				withStore(t, o, func(ctx context.Context, st *session.SQLite) { tc.record(ctx, st, root) })
			}
			o.Trust, o.TrustSource, o.NoStore = tc.flag, tc.source, tc.noStore
			asked := 0
			if tc.answer != "" {
				o.AskTrust = func(ctx context.Context, r string) (session.Trust, error) {
					asked++
					if r != root {
						t.Errorf("asked about %s, want %s", r, root)
					}
					return tc.answer, tc.askErr
				}
			}
			l, err := Load(context.Background(), o)
			if asked != tc.wantAsked {
				t.Errorf("asked %d times, want %d", asked, tc.wantAsked)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				if tc.askErr != nil && !errors.Is(err, tc.askErr) {
					t.Errorf("the question's error is not wrapped: %v", err)
				}
				if tc.flag != "" {
					var ce ConfigError
					if !errors.As(err, &ce) {
						t.Errorf("a bad --trust is not a ConfigError: %T", err)
					}
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				if l.Trust != tc.want || l.TrustChosen != tc.wantChosen || !strings.Contains(l.TrustSource, tc.wantSource) {
					t.Errorf("trust %q chosen %v (%s), want %q chosen %v (%s)", l.Trust, l.TrustChosen, l.TrustSource, tc.want, tc.wantChosen, tc.wantSource)
				}
				if l.Config.Trust != tc.want {
					t.Errorf("Config.Trust %q, want %q", l.Config.Trust, tc.want)
				}
				// Only a trusted workspace's file applies as the user's own.
				if got := strings.Contains(l.Config.Profile.System, "PROJECT PROMPT"); got != (tc.want == session.TrustTrusted) {
					t.Errorf("trust %s: the project's system prompt applied: %v", l.Trust, got)
				}
				if tc.noStore && l.Store != nil {
					t.Errorf("NoStore, a store was opened")
				}
				l.Close()
			}
			if tc.noStore {
				return
			}
			trust, chosen, found := storedTrust(t, o, root)
			if tc.stored == "" {
				if found {
					t.Errorf("stored %q (chosen %v), want no record", trust, chosen)
				}
			} else if !found || trust != tc.stored || chosen != tc.storedChosen {
				t.Errorf("stored %q chosen %v (found %v), want %q chosen %v", trust, chosen, found, tc.stored, tc.storedChosen)
			}
		})
	}
}

// TestUntrustedApprovalModeCap: an untrusted workspace runs in default at
// most: --approval-mode above it is an error that says how to trust the
// folder; a profile's is capped, with a warning. Read-only and trusted
// workspaces keep any mode.
func TestUntrustedApprovalModeCap(t *testing.T) {
	tests := []struct {
		name    string
		trust   string
		user    string // the user's file
		project string
		flag    string // --approval-mode
		want    agent.Mode
		err     bool   // a ConfigError naming --trust
		warn    string // in a warning ("" for none about the mode)
	}{
		{name: "untrusted, --approval-mode yolo", trust: "untrusted", flag: "yolo", err: true},
		{name: "untrusted, --approval-mode auto_edit", trust: "untrusted", flag: "auto_edit", err: true},
		{name: "untrusted, --approval-mode auto-edit", trust: "untrusted", flag: "auto-edit", err: true},
		{name: "no trust given, --approval-mode yolo", flag: "yolo", err: true},
		{name: "untrusted, --approval-mode plan", trust: "untrusted", flag: "plan", want: agent.ModePlan},
		{name: "untrusted, --approval-mode default", trust: "untrusted", flag: "default", want: agent.ModeDefault},
		{name: "untrusted, the profile's yolo", trust: "untrusted", user: "[profiles.headless]\napproval_mode = \"yolo\"\n",
			want: agent.ModeDefault, warn: `Approval mode yolo (profile "headless") is not available in an untrusted workspace`},
		{name: "untrusted, the profile's auto_edit", trust: "untrusted", user: "[profiles.headless]\napproval_mode = \"auto_edit\"\n",
			want: agent.ModeDefault, warn: "Approval mode auto_edit"},
		{name: "untrusted, the profile's plan", trust: "untrusted", user: "[profiles.headless]\napproval_mode = \"plan\"\n", want: agent.ModePlan},
		{name: "untrusted, the project's yolo", trust: "untrusted", project: "[profiles.headless]\napproval_mode = \"yolo\"\n",
			want: agent.ModeDefault, warn: "looser than your"},
		{name: "untrusted, --approval-mode plan over the profile's yolo", trust: "untrusted", user: "[profiles.headless]\napproval_mode = \"yolo\"\n",
			flag: "plan", want: agent.ModePlan},
		{name: "read-only, --approval-mode yolo", trust: "read-only", flag: "yolo", want: agent.ModeYolo},
		{name: "read-only, the profile's yolo", trust: "read-only", user: "[profiles.headless]\napproval_mode = \"yolo\"\n", want: agent.ModeYolo},
		{name: "trusted, --approval-mode yolo", trust: "trusted", flag: "yolo", want: agent.ModeYolo},
		{name: "trusted, the profile's auto_edit", trust: "trusted", user: "[profiles.headless]\napproval_mode = \"auto_edit\"\n", want: agent.ModeAutoEdit},
		{name: "trusted, the project's yolo", trust: "trusted", project: "[profiles.headless]\napproval_mode = \"yolo\"\n", want: agent.ModeYolo},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, ws := setup(t, tc.user, tc.project, nil)
			o.Trust, o.ApprovalMode = tc.trust, tc.flag
			var told []string
			o.Warn = func(s string) { told = append(told, s) }
			b, err := start(context.Background(), o)
			if tc.err {
				var ce ConfigError
				if err == nil || !errors.As(err, &ce) {
					t.Fatalf("%v (%T), want a ConfigError", err, err)
				}
				root := realPath(t, ws)
				for _, want := range []string{"--trust trusted", "hearth workspaces trust " + root + " trusted", "untrusted", strings.ReplaceAll(tc.flag, "-", "_")} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("the error does not say %q: %v", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if b.Config.Profile.Mode != tc.want || b.bot.Mode() != tc.want {
				t.Errorf("mode %q (agent %q), want %q", b.Config.Profile.Mode, b.bot.Mode(), tc.want)
			}
			if tc.want == agent.ModeDefault && b.Profile.ApprovalMode != string(agent.ModeDefault) {
				t.Errorf("the profile still says %q", b.Profile.ApprovalMode)
			}
			all := strings.Join(told, "\n")
			switch {
			case tc.warn != "" && !strings.Contains(all, tc.warn):
				t.Errorf("warnings %q, want one with %q", told, tc.warn)
			case tc.warn == "" && strings.Contains(all, "pproval mode"):
				t.Errorf("unexpected warning about the mode: %q", told)
			}
		})
	}
}

// TestLoadedCloseLeavesTheGivenStore: a store given in Options is the
// caller's: neither Close nor a failed Load closes it. One Load opened is
// closed by Close.
func TestLoadedCloseLeavesTheGivenStore(t *testing.T) {
	ctx := context.Background()
	o, ws := setup(t, "", "", nil)
	st, err := session.Open(ctx, filepath.Join(t.TempDir(), "shared.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	root := realPath(t, ws)
	if _, err := st.AddWorkspace(ctx, session.Workspace{Path: root, Trust: session.TrustReadOnly}); err != nil {
		t.Fatal(err)
	}
	o.Store = st
	l, err := Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	// The trust is the given store's, and the store is the agent's.
	if l.Trust != session.TrustReadOnly || l.Store != st || l.Config.Store != st {
		t.Errorf("trust %q, store %v", l.Trust, l.Store)
	}
	if _, err := os.Stat(o.Paths.Database()); err == nil {
		t.Errorf("Load opened the configured store too")
	}
	l.Close()
	if _, err := st.Workspaces(ctx); err != nil {
		t.Fatalf("the given store was closed: %v", err)
	}
	// A Load that fails after the store is chosen leaves it open too.
	o.Trust, o.ApprovalMode = "untrusted", "yolo"
	if _, err := Load(ctx, o); err == nil {
		t.Fatal("--approval-mode yolo in an untrusted workspace was accepted")
	}
	if _, err := st.Workspaces(ctx); err != nil {
		t.Fatalf("a failed Load closed the given store: %v", err)
	}

	// Without Options.Store, Load's own store is closed by Close.
	o.Store, o.Trust, o.ApprovalMode = nil, "", ""
	l, err = Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	own := l.Store
	if own == nil || own == st {
		t.Fatalf("store %v", own)
	}
	l.Close()
	if _, err := own.Workspaces(ctx); err == nil {
		t.Errorf("Load's own store is still open after Close")
	}
}

// TestTrustReadFromTheUsersStore: the trust is read from the store the
// user's own file names, never from one a project names.
func TestTrustReadFromTheUsersStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.db")
	theirs := filepath.Join(dir, "theirs.db")
	user := "[store]\nurl = \"" + mine + "\"\n"
	project := "[store]\nurl = \"" + theirs + "\"\n" + trustProject
	o, ws := setup(t, user, project, nil)
	root := realPath(t, ws)
	// The project's store says trusted; the user's knows nothing.
	st, err := session.Open(ctx, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddWorkspace(ctx, session.Workspace{Path: root, Trust: session.TrustTrusted}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	l, err := Load(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Trust != session.TrustUntrusted || strings.Contains(l.Config.Profile.System, "PROJECT PROMPT") {
		t.Errorf("trust %q from the project's store", l.Trust)
	}
	if sq, ok := l.Store.(*session.SQLite); !ok || sq.Path() != mine {
		t.Errorf("store %v, want %s", l.Store, mine)
	}
}

// TestAskTrustAnswers: what the question answers is a trust level, read as
// --trust is: spelled otherwise, it is that level; no level at all (an
// embedding program's question that returns "") is an error, never a
// workspace without limits.
func TestAskTrustAnswers(t *testing.T) {
	tests := []struct {
		answer  session.Trust
		want    session.Trust
		wantErr bool
	}{
		{" Trusted ", session.TrustTrusted, false},
		{"READ-ONLY", session.TrustReadOnly, false},
		{"untrusted", session.TrustUntrusted, false},
		{"", "", true},
		{"yes", "", true},
	}
	for _, tc := range tests {
		t.Run(string(tc.answer), func(t *testing.T) {
			o, ws := setup(t, "[profiles.headless]\napproval_mode = \"yolo\"\n", trustProject, nil)
			root := realPath(t, ws)
			o.AskTrust = func(context.Context, string) (session.Trust, error) { return tc.answer, nil }
			b, err := start(context.Background(), o)
			if tc.wantErr {
				if err == nil {
					defer b.Close()
					t.Fatalf("answer %q: trust %q, mode %q, Config.Trust %q", tc.answer, b.Trust, b.bot.Mode(), b.Config.Trust)
				}
				if _, chosen, found := storedTrust(t, o, root); found && chosen {
					t.Errorf("answer %q was remembered", tc.answer)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if b.Trust != tc.want || b.Config.Trust != tc.want || b.bot.Trust() != tc.want {
				t.Errorf("trust %q, Config.Trust %q, agent %q; want %q", b.Trust, b.Config.Trust, b.bot.Trust(), tc.want)
			}
			if got := strings.Contains(b.Config.Profile.System, "PROJECT PROMPT"); got != (tc.want == session.TrustTrusted) {
				t.Errorf("the project's prompt applied: %v", got)
			}
			// The user's yolo: capped when untrusted, kept when read-only
			// (a trusted project's [profiles.headless] replaces the
			// user's whole, so its mode is not checked here).
			switch {
			case tc.want == session.TrustUntrusted && b.bot.Mode() != agent.ModeDefault,
				tc.want == session.TrustReadOnly && b.bot.Mode() != agent.ModeYolo:
				t.Errorf("trust %s: mode %q", tc.want, b.bot.Mode())
			}
			if trust, chosen, _ := storedTrust(t, o, root); trust != tc.want || !chosen {
				t.Errorf("stored %q chosen %v", trust, chosen)
			}
		})
	}
}

// TestNoShell: a server's workspace whose commands could read the other
// workspaces (no mount namespace) is given no shell, and the user is told
// why.
func TestNoShell(t *testing.T) {
	o, _ := setup(t, "[profiles.headless]\ntools = [\"*\"]\n", "", nil)
	o.Trust = "trusted"
	o.NoShell = "commands are not offered in this workspace: this system cannot hide the other workspaces from them"
	var warned []string
	o.Warn = func(s string) { warned = append(warned, s) }
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := names(a); strings.Contains(got, "run_shell_command") || !strings.Contains(got, "write_file") {
		t.Errorf("tools: %s", got)
	}
	if !slices.ContainsFunc(warned, func(w string) bool { return strings.Contains(w, "cannot hide the other workspaces") }) {
		t.Errorf("warnings %q", warned)
	}
}
