// Package redteam attacks the real hearth binary the way a prompt-injected
// model would: a scripted fake model server (llm/llmtest) makes the tool
// calls of each attack, in order, against a fresh home directory full of
// canaries, a canary directory outside the workspace, and listeners that
// count every connection (exfiltration). After each run, and after "what
// runs later" (the user's own git commands in the workspace, unconfined),
// the suite checks that nothing outside the workspace changed, that no
// planted code ran, that no listener was reached, that no secret reached
// the model or Hearth's output, and that Hearth neither hung nor crashed.
//
// Run it with scripts/redteam.sh (as root and as an unprivileged user), or
// directly:
//
//	HEARTH_REDTEAM=1 go test -race -count=1 -parallel 8 ./redteam/
//
// Without HEARTH_REDTEAM or HEARTH_REDTEAM_BIN it does nothing, so that
// `go test ./...` does not run it alongside every other package.
//
// HEARTH_REDTEAM_BIN names a hearth binary to attack instead of building
// one; HEARTH_REDTEAM_RUN (a regexp) picks attacks by name; with
// HEARTH_REDTEAM_REPORT=1 a failing attack is logged, not failed, and the
// summary says what escaped (for a report while the product is changing).
package redteam

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// hearthBin is the binary under attack, built once by TestMain.
var hearthBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	flag.Parse()
	bin := os.Getenv("HEARTH_REDTEAM_BIN")
	if bin == "" && os.Getenv("HEARTH_REDTEAM") == "" {
		// Not inside `go test ./...`: its fork bombs and memory hogs
		// would load the machine under every other package's tests.
		// scripts/test.sh runs it on its own, through scripts/redteam.sh.
		fmt.Println("redteam: skipped; run scripts/redteam.sh (or set HEARTH_REDTEAM=1)")
		return 0
	}
	var cleanup func()
	if bin == "" && !testing.Short() {
		var err error
		bin, cleanup, err = buildHearth()
		if err != nil {
			fmt.Fprintln(os.Stderr, "redteam: building hearth:", err)
			return 1
		}
	}
	hearthBin = bin
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	printSummary()
	return code
}

// buildHearth builds ./cmd/hearth from the module root into a temporary
// directory every user can read (the suite may run as another user).
func buildHearth() (string, func(), error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %w", err)
	}
	root := strings.TrimSpace(string(out))
	dir, err := os.MkdirTemp("", "hearth-redteam-bin-")
	if err != nil {
		return "", nil, err
	}
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "hearth")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hearth")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("%v\n%s", err, b)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// outcome names, in the order the summary prints them.
// "known" is an escape that docs/shell.md states as a known limit: it is
// counted and listed, and does not fail the suite.
var outcomes = []string{"escape", "planted", "exfiltrated", "leak", "hang", "crash", "terminal", "memory", "known"}

type record struct {
	name, class string
	skipped     string // the reason, when skipped
	failures    map[string][]string
}

var (
	recMu   sync.Mutex
	records []record
)

func addRecord(r record) {
	recMu.Lock()
	defer recMu.Unlock()
	records = append(records, r)
}

// printSummary prints, per class, how many attacks ran, were skipped and
// failed each way, then a line per failing attack.
func printSummary() {
	recMu.Lock()
	defer recMu.Unlock()
	if len(records) == 0 {
		return
	}
	type count struct {
		ran, skipped int
		by           map[string]int
	}
	per := map[string]*count{}
	total := &count{by: map[string]int{}}
	for _, r := range records {
		c := per[r.class]
		if c == nil {
			c = &count{by: map[string]int{}}
			per[r.class] = c
		}
		if r.skipped != "" {
			c.skipped++
			total.skipped++
			continue
		}
		c.ran++
		total.ran++
		for _, o := range outcomes {
			if len(r.failures[o]) > 0 {
				c.by[o]++
				total.by[o]++
			}
		}
	}
	classes := make([]string, 0, len(per))
	for k := range per {
		classes = append(classes, k)
	}
	sort.Strings(classes)
	who := "uid " + fmt.Sprint(os.Getuid())
	if os.Getuid() == 0 {
		who = "root"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nredteam summary (%s): %d attacks, %d ran, %d skipped\n", who, total.ran+total.skipped, total.ran, total.skipped)
	fmt.Fprintf(&b, "%-14s %4s %4s", "class", "ran", "skip")
	for _, o := range outcomes {
		fmt.Fprintf(&b, " %6.6s", o)
	}
	b.WriteString("\n")
	line := func(name string, c *count) {
		fmt.Fprintf(&b, "%-14s %4d %4d", name, c.ran, c.skipped)
		for _, o := range outcomes {
			fmt.Fprintf(&b, " %6d", c.by[o])
		}
		b.WriteString("\n")
	}
	for _, k := range classes {
		line(k, per[k])
	}
	line("TOTAL", total)
	sort.Slice(records, func(i, j int) bool { return records[i].name < records[j].name })
	var skips []string
	for _, r := range records {
		if r.skipped != "" {
			skips = append(skips, fmt.Sprintf("  skip %s: %s", r.name, r.skipped))
			continue
		}
		for _, o := range outcomes {
			for _, d := range r.failures[o] {
				fmt.Fprintf(&b, "  %-11s %-12s %s: %s\n", strings.ToUpper(o), r.class, r.name, d)
			}
		}
	}
	for _, s := range skips {
		b.WriteString(s + "\n")
	}
	fmt.Fprintf(&b, "redteam: %d escapes, %d planted, %d exfiltrated, %d leaks, %d hangs, %d crashes, %d terminal, %d memory; %d skipped; %d known limits (docs/shell.md)\n",
		total.by["escape"], total.by["planted"], total.by["exfiltrated"], total.by["leak"], total.by["hang"], total.by["crash"],
		total.by["terminal"], total.by["memory"], total.skipped, total.by["known"])
	fmt.Fprint(os.Stdout, b.String())
}
