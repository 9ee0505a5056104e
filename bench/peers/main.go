// Command peers compares Hearth with peer CLIs on one scripted task: read a
// file, answer. Each program gets the prompt "what does a.txt say?" in a
// workspace holding a.txt, runs headless against a mock model server on
// loopback, and makes two model requests: the mock answers the first with
// a call of the program's own read-file tool on a.txt, and the second (the
// one that carries the tool's result) with "It says hello.". Wall time,
// peak memory and CPU of each run's whole process tree are measured by
// treelaunch, the bytes of each request by the mock.
//
// Run it through run.sh, which installs the peers from npm at pinned
// versions, builds Hearth, hello-world and the launcher, and runs this
// offline (a network namespace with only loopback):
//
//	bench/peers/run.sh [-n RUNS] [-reps REPS] [-only hearth,codex,...]
//
// Subcommands: `peers bench FLAGS` runs the comparison; `peers serve
// -tool NAME -args JSON [-addr A] [-dump DIR]` runs the mock alone, for
// trying a CLI by hand.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peers bench FLAGS | peers serve FLAGS (bench/peers/run.sh runs it)")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "bench":
		os.Exit(bench(os.Args[2:]))
	case "serve":
		os.Exit(serve(os.Args[2:]))
	}
	fmt.Fprintf(os.Stderr, "peers: unknown command %q\n", os.Args[1])
	os.Exit(2)
}

func serve(argv []string) int {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	tool := fs.String("tool", "read_file", "the tool the mock calls")
	args := fs.String("args", `{"file_path":"a.txt"}`, "its arguments (JSON)")
	dump := fs.String("dump", "", "directory where each request's body is written")
	fs.Parse(argv)
	var a map[string]any
	if err := json.Unmarshal([]byte(*args), &a); err != nil {
		fmt.Fprintln(os.Stderr, "-args:", err)
		return 2
	}
	m, err := startMock(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	m.verbose, m.dump = true, *dump
	m.reset(toolPlan{Name: *tool, Args: a})
	fmt.Println(m.URL)
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	<-c
	return 0
}

// launchReport is treelaunch's report.
type launchReport struct {
	StartNs       int64  `json:"start_ns"`
	WallUs        int64  `json:"wall_us"`
	MainUs        int64  `json:"main_us"`
	Exit          int    `json:"exit"`
	Signal        string `json:"signal"`
	MaxRSSMainKiB int64  `json:"maxrss_main_kib"`
	MaxRSSTreeKiB int64  `json:"maxrss_tree_kib"`
	SumPeakKiB    int64  `json:"sum_peak_kib"`
	Procs         int    `json:"procs"`
	UserUs        int64  `json:"user_us"`
	SysUs         int64  `json:"sys_us"`
	Leftover      int    `json:"leftover"`
	TimedOut      bool   `json:"timed_out"`
	Error         string `json:"error"`
}

// reqSummary is one request the mock saw, without its body.
type reqSummary struct {
	Path    string `json:"path"`
	Kind    string `json:"kind"`
	Step    string `json:"step,omitempty"`
	Bytes   int    `json:"bytes"`
	Decoded int    `json:"decoded"`
	Problem string `json:"problem,omitempty"`
}

type runResult struct {
	Subject  string       `json:"subject"`
	Rep      int          `json:"rep"`
	Run      int          `json:"run"` // 0: the first run in a new HOME
	Launch   launchReport `json:"launch"`
	Requests []reqSummary `json:"requests"`
	// FirstBytes is the size of the first model request (decoded).
	FirstBytes int `json:"first_bytes"`
	// ToFirstUs is the time from the start to the first model request;
	// AfterLastUs from the last request's arrival to the end of the tree.
	ToFirstUs   int64  `json:"to_first_us"`
	AfterLastUs int64  `json:"after_last_us"`
	Model       int    `json:"model_requests"`
	Side        int    `json:"side_requests"`
	SideBytes   int    `json:"side_bytes"`
	OK          bool   `json:"ok"`
	Problem     string `json:"problem,omitempty"`
}

type options struct {
	peers, hearth, hello, launcher, out string
	n, reps                             int
	only                                string
	timeout                             time.Duration
}

func bench(argv []string) int {
	var o options
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	fs.StringVar(&o.peers, "peers", "", "directory the peers are installed in (one subdirectory each: codex, gemini, qwen, opencode)")
	fs.StringVar(&o.hearth, "hearth", "", "the hearth binary (copied into a new file before use)")
	fs.StringVar(&o.hello, "hello", "", "the hello-world binary (copied likewise)")
	fs.StringVar(&o.launcher, "launcher", "", "the treelaunch binary")
	fs.StringVar(&o.out, "out", "", "directory for this run's homes, workspace and results (emptied first)")
	fs.IntVar(&o.n, "n", 5, "measured runs per program and repetition")
	fs.IntVar(&o.reps, "reps", 2, "repetitions (each with new homes and a first, unmeasured run)")
	fs.StringVar(&o.only, "only", "", "comma-separated programs to run: hearth-openai, codex, gemini, qwen, opencode (hello, hearth and hearth-version always run)")
	fs.DurationVar(&o.timeout, "timeout", 3*time.Minute, "a run that takes longer is killed and fails")
	fs.Parse(argv)
	if o.hearth == "" || o.hello == "" || o.launcher == "" || o.out == "" || o.peers == "" {
		fmt.Fprintln(os.Stderr, "peers bench: -peers, -hearth, -hello, -launcher and -out are required (run.sh sets them)")
		return 2
	}
	code, err := runBench(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peers bench: harness broken:", err)
		return 1
	}
	return code
}

// copyFile copies src into a new file dst (see cmd/hearth/bench_test.go's
// installedBinary: a process started from the linker's fresh output counts
// more of its executable as resident than one started from a copy).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			if i := strings.IndexByte(l, ':'); i >= 0 {
				return strings.TrimSpace(l[i+1:])
			}
		}
	}
	return "?"
}

func commandOutput(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// offline says whether the network beyond loopback is unreachable.
func offline() string {
	c, err := net.DialTimeout("tcp", "registry.npmjs.org:443", 3*time.Second)
	if err == nil {
		c.Close()
		return "NOT isolated: registry.npmjs.org was reachable (run through run.sh for a loopback-only network namespace)"
	}
	return "isolated (a network namespace with loopback only): " + err.Error()
}

type state struct {
	o        options
	m        *mock
	ws       string
	subjects []subject
	// per subject: its directory (peers) and whether it can run, and why not
	dir     map[string]string
	skip    map[string]string
	version map[string]string
	results []runResult
	log     *os.File
	// first requests saved (one per subject)
	firstSaved map[string]bool
}

func runBench(o options) (int, error) {
	if err := os.RemoveAll(o.out); err != nil {
		return 0, err
	}
	for _, d := range []string{"bin", "homes", "ws", "requests", "logs"} {
		if err := os.MkdirAll(filepath.Join(o.out, d), 0o755); err != nil {
			return 0, err
		}
	}
	hearth := filepath.Join(o.out, "bin", "hearth")
	hello := filepath.Join(o.out, "bin", "hello")
	if err := copyFile(o.hearth, hearth); err != nil {
		return 0, err
	}
	if err := copyFile(o.hello, hello); err != nil {
		return 0, err
	}
	ws := filepath.Join(o.out, "ws")
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte(fileText), 0o644); err != nil {
		return 0, err
	}
	m, err := startMock("127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mock server: %w", err)
	}
	defer m.Close()
	log, err := os.Create(filepath.Join(o.out, "runs.jsonl"))
	if err != nil {
		return 0, err
	}
	defer log.Close()
	s := &state{o: o, m: m, ws: ws, dir: map[string]string{}, skip: map[string]string{}, version: map[string]string{}, log: log, firstSaved: map[string]bool{}}
	var only []string
	if o.only != "" {
		only = append(strings.Split(o.only, ","), "hello", "hearth", "hearth-version")
	}
	for _, sub := range subjects(hearth, hello) {
		if only != nil && !slices.Contains(only, sub.Key) {
			continue
		}
		s.subjects = append(s.subjects, sub)
		switch {
		case sub.Package == "":
			if sub.Key == "hello" {
				s.version[sub.Key] = runtime.Version()
			} else {
				s.version[sub.Key] = commandOutput(hearth, "--version")
			}
		default:
			dir := filepath.Join(o.peers, sub.Key)
			s.dir[sub.Key] = dir
			if p := installProblem(dir); p != "" {
				s.skip[sub.Key] = "not installed: " + p
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, sub.Bin)); err != nil {
				s.skip[sub.Key] = "not installed (no " + filepath.Join(dir, sub.Bin) + "; run.sh installs it)"
				continue
			}
			s.version[sub.Key] = packageVersion(dir, sub.Package)
		}
	}
	start := time.Now()
	fmt.Printf("peer comparison, %s\n", start.Format("2006-01-02 15:04 MST"))
	fmt.Printf("machine: %s, %d cores, Linux %s, node %s, %s\n", cpuModel(), runtime.NumCPU(), commandOutput("uname", "-r"), commandOutput("node", "--version"), runtime.Version())
	fmt.Printf("network: %s\n", offline())
	fmt.Printf("load average at start: %s\n", loadavg())
	fmt.Printf("runs: %d measured per program and repetition, %d repetitions, after one first run in each new HOME; results in %s\n\n", o.n, o.reps, o.out)
	loads := []string{loadavg()}
	for rep := 1; rep <= o.reps; rep++ {
		// New homes, and a first run in each (not in the medians).
		homes := map[string]string{}
		for _, sub := range s.subjects {
			if s.skip[sub.Key] != "" {
				continue
			}
			homes[sub.Key] = filepath.Join(o.out, "homes", fmt.Sprintf("%s-%d", sub.Key, rep))
			r := s.runOnce(sub, homes[sub.Key], rep, 0)
			fmt.Printf("rep %d first run  %-20s %s\n", rep, sub.Name, r.line())
			if !r.OK && !sub.Reference {
				s.skip[sub.Key] = fmt.Sprintf("first run failed (repetition %d): %s", rep, r.Problem)
			}
		}
		for i := 1; i <= o.n; i++ {
			// Interleaved, each round in a rotated order.
			k := len(s.subjects)
			for j := range k {
				sub := s.subjects[(j+i+rep)%k]
				if s.skip[sub.Key] != "" {
					continue
				}
				r := s.runOnce(sub, homes[sub.Key], rep, i)
				fmt.Printf("rep %d run %d      %-20s %s\n", rep, i, sub.Name, r.line())
			}
		}
		loads = append(loads, loadavg())
	}
	fmt.Printf("\nload average after each repetition: %s; took %s\n\n", strings.Join(loads, " → "), time.Since(start).Round(time.Second))
	return s.report()
}

func (r runResult) line() string {
	l := fmt.Sprintf("%8.0f ms  tree max %6.1f MB  sum %6.1f MB  cpu %6.0f ms  procs %2d  first request %6d B  model %d side %d",
		float64(r.Launch.WallUs)/1000, float64(r.Launch.MaxRSSTreeKiB)/1024, float64(r.Launch.SumPeakKiB)/1024,
		float64(r.Launch.UserUs+r.Launch.SysUs)/1000, r.Launch.Procs, r.FirstBytes, r.Model, r.Side)
	if !r.OK {
		l += "  FAILED: " + r.Problem
	}
	return l
}

func (s *state) runOnce(sub subject, home string, rep, run int) runResult {
	r := runResult{Subject: sub.Key, Rep: rep, Run: run}
	if err := os.MkdirAll(home, 0o755); err != nil {
		r.Problem = err.Error()
		return r
	}
	args, env, plan, err := sub.Configure(setup{Home: home, WS: s.ws, MockURL: s.m.URL})
	if err != nil {
		r.Problem = "configure: " + err.Error()
		return r
	}
	bin := sub.Bin
	if sub.Package != "" {
		bin = filepath.Join(s.dir[sub.Key], sub.Bin)
	}
	s.m.reset(plan)
	tag := fmt.Sprintf("%s-%d-%d", sub.Key, rep, run)
	stdout := filepath.Join(s.o.out, "logs", tag+".stdout")
	stderr := filepath.Join(s.o.out, "logs", tag+".stderr")
	cmd := exec.Command(s.o.launcher, append([]string{"-stdout", stdout, "-stderr", stderr,
		"-timeout", s.o.timeout.String(), "--", bin}, args...)...)
	cmd.Dir = s.ws
	cmd.Env = append(cleanEnv(home), env...)
	var lerr bytes.Buffer
	cmd.Stderr = &lerr
	out, err := cmd.Output()
	if jerr := json.Unmarshal(bytes.TrimSpace(out), &r.Launch); jerr != nil {
		r.Problem = fmt.Sprintf("launcher: %v %s %s", err, out, lerr.String())
		s.record(r)
		return r
	}
	if r.Launch.Error != "" {
		r.Problem = "launcher: " + r.Launch.Error
		s.record(r)
		return r
	}
	recs := s.m.records()
	start := time.Unix(0, r.Launch.StartNs)
	for _, q := range recs {
		r.AfterLastUs = start.Add(time.Duration(r.Launch.WallUs) * time.Microsecond).Sub(q.Time).Microseconds()
		r.Requests = append(r.Requests, reqSummary{Path: q.Path, Kind: q.Kind, Step: q.Step, Bytes: q.Bytes, Decoded: q.Decoded, Problem: q.Problem})
		switch q.Kind {
		case "model":
			if r.Model == 0 {
				r.FirstBytes = q.Decoded
				r.ToFirstUs = q.Time.Sub(start).Microseconds()
				if !s.firstSaved[sub.Key] && run > 0 {
					s.firstSaved[sub.Key] = true
					os.WriteFile(filepath.Join(s.o.out, "requests", sub.Key+"-first.json"), q.Body, 0o644)
				}
			}
			r.Model++
		case "side":
			r.Side++
			r.SideBytes += q.Decoded
		}
	}
	so, _ := os.ReadFile(stdout)
	se, _ := os.ReadFile(stderr)
	r.Problem = check(sub, r, recs, string(so), string(se))
	r.OK = r.Problem == ""
	if r.OK {
		// Keep the logs of failed runs only.
		os.Remove(stdout)
		os.Remove(stderr)
	}
	s.record(r)
	return r
}

func (s *state) record(r runResult) {
	s.results = append(s.results, r)
	b, _ := json.Marshal(r)
	s.log.Write(append(b, '\n'))
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	return strings.ReplaceAll(s, "\n", " ⏎ ")
}

// check says what was wrong with a run, or "".
func check(sub subject, r runResult, recs []record, stdout, stderr string) string {
	l := r.Launch
	switch {
	case l.TimedOut:
		return "timed out: " + tail(stderr, 300)
	case l.Exit != 0:
		return fmt.Sprintf("exit %d %s: %s", l.Exit, l.Signal, tail(stderr, 300))
	case !strings.Contains(stdout, sub.Want):
		return fmt.Sprintf("the answer %q is not in its output: %s | stderr: %s", sub.Want, tail(stdout, 200), tail(stderr, 200))
	}
	if sub.NoModel {
		if len(recs) > 0 {
			return fmt.Sprintf("%d requests to the mock, none expected", len(recs))
		}
		return ""
	}
	for _, q := range recs {
		if q.Problem != "" {
			return fmt.Sprintf("request %s: %s", q.Path, q.Problem)
		}
	}
	var steps []string
	for _, q := range recs {
		if q.Kind == "model" {
			steps = append(steps, q.Step)
		}
	}
	if !slices.Equal(steps, []string{"call", "answer"}) {
		return fmt.Sprintf("model requests were %v, not [call answer]", steps)
	}
	return ""
}

func median[T int64 | int](v []T) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return float64(s[n/2])
	}
	return float64(s[n/2-1]+s[n/2]) / 2
}

// span formats the per-repetition values as "a" or "a – b".
func span(vals []float64, format func(float64) string) string {
	if len(vals) == 0 {
		return "—"
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	a, b := format(lo), format(hi)
	if a == b {
		return a
	}
	return a + " – " + b
}

func fmtWall(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f ms", ms)
}

func fmtMB(kib float64) string { return fmt.Sprintf("%.0f MB", kib/1024) }

func fmtMB1(kib float64) string {
	if kib < 100*1024 {
		return fmt.Sprintf("%.1f MB", kib/1024)
	}
	return fmtMB(kib)
}

func fmtKB(b float64) string { return fmt.Sprintf("%.1f KB", b/1000) }

func fmtRatio(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f×", x)
	}
	return fmt.Sprintf("%.1f×", x)
}

type repStats struct {
	wall, tree, sum, cpu, first, side, procs, toFirst, afterLast float64
	ok, all                                                      int
}

func (s *state) stats(key string) (per []repStats, first []float64) {
	for rep := 1; rep <= s.o.reps; rep++ {
		var wall, tree, sum, cpu, toFirst, afterLast []int64
		var fb, side, procs []int
		st := repStats{}
		for _, r := range s.results {
			if r.Subject != key || r.Rep != rep {
				continue
			}
			if r.Run == 0 {
				if r.OK {
					first = append(first, float64(r.Launch.WallUs)/1000)
				}
				continue
			}
			st.all++
			if !r.OK {
				continue
			}
			st.ok++
			wall = append(wall, r.Launch.WallUs)
			tree = append(tree, r.Launch.MaxRSSTreeKiB)
			sum = append(sum, r.Launch.SumPeakKiB)
			cpu = append(cpu, r.Launch.UserUs+r.Launch.SysUs)
			fb = append(fb, r.FirstBytes)
			side = append(side, r.Side)
			procs = append(procs, r.Launch.Procs)
			toFirst = append(toFirst, r.ToFirstUs)
			afterLast = append(afterLast, r.AfterLastUs)
		}
		if st.all == 0 {
			continue
		}
		st.wall, st.tree, st.sum, st.cpu = median(wall)/1000, median(tree), median(sum), median(cpu)/1000
		st.first, st.side, st.procs = median(fb), median(side), median(procs)
		st.toFirst, st.afterLast = median(toFirst)/1000, median(afterLast)/1000
		per = append(per, st)
	}
	return per, first
}

func (s *state) report() (int, error) {
	code := 0
	hearthPer, _ := s.stats("hearth")
	fmt.Println("| program | version | wall, median | × Hearth | to first request | peak RSS, largest process | peak RSS, tree sum | CPU, user+sys | CPU × Hearth | processes | first request | side requests | first run in a new HOME | runs ok |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	var failures []string
	for _, sub := range s.subjects {
		if why := s.skip[sub.Key]; why != "" && !s.ran(sub.Key) {
			fmt.Printf("| %s | %s | did not run: %s | | | | | | | | | | | |\n", sub.Name, s.version[sub.Key], why)
			failures = append(failures, fmt.Sprintf("%s: %s", sub.Name, why))
			if sub.Reference {
				code = 1
			}
			continue
		}
		per, first := s.stats(sub.Key)
		var wall, tree, sum, cpu, fb, side, procs, ratio, cpuRatio, toFirst []float64
		ok, all := 0, 0
		for i, st := range per {
			ok += st.ok
			all += st.all
			if st.ok == 0 {
				continue
			}
			wall = append(wall, st.wall)
			tree = append(tree, st.tree)
			sum = append(sum, st.sum)
			cpu = append(cpu, st.cpu)
			fb = append(fb, st.first)
			side = append(side, st.side)
			procs = append(procs, st.procs)
			toFirst = append(toFirst, st.toFirst)
			if i < len(hearthPer) && hearthPer[i].wall > 0 {
				ratio = append(ratio, st.wall/hearthPer[i].wall)
			}
			if i < len(hearthPer) && hearthPer[i].cpu > 0 {
				cpuRatio = append(cpuRatio, st.cpu/hearthPer[i].cpu)
			}
		}
		firstReq, toFirstReq := span(fb, fmtKB), span(toFirst, fmtWall)
		if sub.NoModel {
			firstReq, toFirstReq = "—", "—"
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d/%d |\n", sub.Name, s.version[sub.Key],
			span(wall, fmtWall), span(ratio, fmtRatio), toFirstReq, span(tree, fmtMB1), span(sum, fmtMB1), span(cpu, fmtWall), span(cpuRatio, fmtRatio),
			span(procs, func(x float64) string { return fmt.Sprintf("%.0f", x) }), firstReq,
			span(side, func(x float64) string { return fmt.Sprintf("%.0f", x) }), span(first, fmtWall), ok, all)
		if ok < all {
			failures = append(failures, fmt.Sprintf("%s: %d of %d runs failed (see runs.jsonl and logs/)", sub.Name, all-ok, all))
			if sub.Reference {
				code = 1
			}
		}
		if why := s.skip[sub.Key]; why != "" {
			failures = append(failures, fmt.Sprintf("%s: %s", sub.Name, why))
		}
	}
	fmt.Println()
	fmt.Println("Ranges are the lowest and highest of the repetitions' medians. Wall: from starting the program to the exit of the last process of its tree.")
	fmt.Println("Peak RSS, largest process: the kernel's ru_maxrss over the tree (RUSAGE_CHILDREN), exact; tree sum: the largest sum of the tree's RSS sampled every 10 ms (shared pages counted once per process).")
	fmt.Println("CPU: user and system time of the whole tree (getrusage RUSAGE_CHILDREN), less sensitive than wall time to other work on the machine.")
	fmt.Println("Processes: how many the 10 ms sampling saw (a shorter-lived one can be missed).")
	fmt.Println("To first request: from starting the program to the mock receiving its first model request (start-up, configuration, tools, the prompt built).")
	fmt.Println("First request: bytes of the body of the first model request (the one answered with the tool call). Side requests: requests without tools (titles).")
	fmt.Println()
	fmt.Println("What each program was given:")
	for _, sub := range s.subjects {
		if sub.Notes == "" {
			continue
		}
		fmt.Printf("- %s (%s; tool call %s): %s\n", sub.Name, sub.Wire, sub.Tool, sub.Notes)
	}
	fmt.Println()
	fmt.Println("First model request, by part (from requests/*-first.json):")
	for _, sub := range s.subjects {
		b, err := os.ReadFile(filepath.Join(s.o.out, "requests", sub.Key+"-first.json"))
		if err != nil {
			continue
		}
		fmt.Printf("- %s: %s\n", sub.Name, breakdown(b))
	}
	if len(failures) > 0 {
		fmt.Println()
		fmt.Println("Problems:")
		for _, f := range failures {
			fmt.Println("- " + f)
		}
	}
	if code != 0 {
		return code, errors.New("hearth or hello-world did not complete every run (see above)")
	}
	return 0, nil
}

func (s *state) ran(key string) bool {
	for _, r := range s.results {
		if r.Subject == key && r.Run > 0 {
			return true
		}
	}
	return false
}

// breakdown splits a first request into its system prompt, tool
// definitions and the rest, whichever wire it is in.
func breakdown(body []byte) string {
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Sprintf("%d bytes (not JSON)", len(body))
	}
	sys := 0
	if v, ok := req["instructions"]; ok { // Responses
		sys += len(v)
	}
	if v, ok := req["systemInstruction"]; ok { // Gemini
		sys += len(v)
	}
	for _, key := range []string{"messages", "input"} {
		var msgs []json.RawMessage
		json.Unmarshal(req[key], &msgs)
		for _, m := range msgs {
			var msg struct {
				Role string `json:"role"`
			}
			json.Unmarshal(m, &msg)
			if msg.Role == "system" || msg.Role == "developer" {
				sys += len(m)
			}
		}
	}
	var tools []json.RawMessage
	json.Unmarshal(req["tools"], &tools)
	n := len(tools)
	if _, ok := req["systemInstruction"]; ok && len(tools) > 0 { // Gemini: one entry of declarations
		var decl []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		}
		json.Unmarshal(req["tools"], &decl)
		n = 0
		for _, d := range decl {
			n += len(d.FunctionDeclarations)
		}
	}
	toolBytes := len(req["tools"])
	rest := len(body) - sys - toolBytes
	names := toolNames(req["tools"])
	sort.Strings(names)
	return fmt.Sprintf("%s in all: system/developer text %s, %d tools %s, the rest (the prompt, context the CLI adds, options) %s; tools: %s",
		fmtKB(float64(len(body))), fmtKB(float64(sys)), n, fmtKB(float64(toolBytes)), fmtKB(float64(rest)), strings.Join(names, ", "))
}

func toolNames(raw json.RawMessage) []string {
	var tools []struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	}
	json.Unmarshal(raw, &tools)
	var names []string
	for _, t := range tools {
		switch {
		case t.Function.Name != "":
			names = append(names, t.Function.Name)
		case t.Name != "":
			names = append(names, t.Name)
		case t.Type != "":
			names = append(names, "("+t.Type+")")
		}
		for _, f := range t.FunctionDeclarations {
			names = append(names, f.Name)
		}
	}
	return names
}
