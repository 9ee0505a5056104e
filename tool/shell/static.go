package shell

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hearth-agent/hearth/sandbox"
)

// parse parses a bash command string.
func parse(src string) (*syntax.File, error) { return parseNamed(src, "bash") }

// parseNamed parses src as the script named name ($0).
func parseNamed(src, name string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), name)
}

// CheckScript checks a whole command string before any of it runs: fork
// bombs, and every command and redirection whose words are known without
// running anything (literals, ~ and $HOME). Commands whose words depend on
// what runs before them are checked again, after expansion, as they run.
// dir is the directory the script starts in ("" if not known).
func (p *Policy) CheckScript(src, dir string) error {
	f, err := parse(src)
	if err != nil {
		return err
	}
	if r := p.checkFile(f, dir); r != nil {
		return r
	}
	return nil
}

func (p *Policy) checkFile(f *syntax.File, dir string) *Refusal {
	s := &static{p: p, dir: cleanDir(dir)}
	return s.file(f)
}

// static checks a parsed script without running it.
type static struct {
	p      *Policy
	dir    string // the directory commands run in, as far as known
	strict bool   // a real shell will run it: everything must be checkable now
	real   bool
	depth  int
	err    *Refusal
}

func (s *static) file(f *syntax.File) *Refusal {
	if s.depth > maxDepth {
		return &Refusal{Rule: RuleUnchecked, Reason: fmt.Sprintf("commands nested more than %d deep cannot be checked", maxDepth)}
	}
	if r := forkBomb(f); r != nil {
		return r
	}
	for _, st := range f.Stmts {
		s.walk(st)
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

// sub returns a checker for a subshell: its cd does not leak out.
func (s *static) sub() *static {
	c := *s
	return &c
}

func (s *static) walk(node syntax.Node) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if s.err != nil || n == nil {
			return false
		}
		switch n := n.(type) {
		case *syntax.Subshell:
			sub := s.sub()
			for _, st := range n.Stmts {
				sub.walk(st)
			}
			s.err = sub.err
			return false
		case *syntax.CmdSubst:
			sub := s.sub()
			for _, st := range n.Stmts {
				sub.walk(st)
			}
			s.err = sub.err
			return false
		case *syntax.ProcSubst:
			sub := s.sub()
			for _, st := range n.Stmts {
				sub.walk(st)
			}
			s.err = sub.err
			return false
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				s.redirect(r)
			}
		case *syntax.CallExpr:
			s.call(n)
		}
		return s.err == nil
	})
}

// writes reports whether a redirection operator opens its word for
// writing.
func writes(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.AppClob, syntax.RdrInOut:
		return true
	case syntax.DplOut:
		// >&word with a word that is not a descriptor: bash's >& file.
		if lit, ok := literal(r.Word, ""); ok {
			return !isFD(lit)
		}
		return true
	}
	return false
}

func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (s *static) redirect(r *syntax.Redirect) {
	if r.Word == nil || !writes(r) {
		return
	}
	path, ok := literal(r.Word, s.p.Home)
	if !ok {
		if s.strict {
			s.err = &Refusal{Rule: RuleUnchecked, Command: "> " + printWord(r.Word),
				Reason: "the file this redirection writes is computed when it runs, by a shell Hearth does not control; spell it out"}
		}
		return
	}
	if err := s.p.CheckWrite(path, s.dir); err != nil {
		s.err = err.(*Refusal)
	}
}

func (s *static) call(ce *syntax.CallExpr) {
	if len(ce.Args) == 0 {
		return
	}
	argv := make([]string, 0, len(ce.Args))
	known := true
	for _, w := range ce.Args {
		lit, ok := literal(w, s.p.Home)
		if !ok {
			known = false
			break
		}
		argv = append(argv, lit)
	}
	if !known {
		name, ok := literal(ce.Args[0], s.p.Home)
		cmd := printWords(ce.Args)
		switch {
		case !ok && s.strict:
			s.err = &Refusal{Rule: RuleUnchecked, Command: cmd, Reason: "the command's name is computed when it runs, by a shell Hearth does not control; spell it out"}
		case ok && s.strict && (changesFiles(commandName(name)) || checkedByName(commandName(name))):
			s.err = &Refusal{Rule: RuleUnchecked, Command: cmd, Reason: "its arguments are computed when it runs, by a shell Hearth does not control; spell them out, or run the command directly"}
		case ok && (commandName(name) == "cd" || commandName(name) == "pushd" || commandName(name) == "popd"):
			s.dir = "" // unknown from here on
		}
		return
	}
	c := &checker{p: s.p, argv: argv, dir: s.dir, real: s.real, depth: s.depth}
	if r := c.check(argv); r != nil {
		s.err = r
		return
	}
	switch commandName(argv[0]) {
	case "cd", "pushd":
		ops := operands(argv[1:], optSpec{}).ops
		target := s.p.Home
		if len(ops) > 0 {
			target = ops[0]
		}
		old := s.dir
		s.dir = ""
		if target != "" && target != "-" && (filepath.IsAbs(target) || old != "") {
			if real, err := sandbox.RealPath(old, target, true); err == nil {
				s.dir = real
			}
		}
	case "popd":
		s.dir = ""
	}
}

// checkedByName lists commands Check looks into beyond changesFiles.
func checkedByName(name string) bool {
	switch name {
	case "cd", "pushd", "kill", "dd", "sort", "uniq", "curl", "wget", "systemctl", "loginctl", "sysctl", "crontab", "command", "builtin":
		return true
	}
	return false
}

// literal returns the value of w when it is known without running
// anything: literal text and quotes, ~ and $HOME (home). Globs are left as
// written.
func literal(w *syntax.Word, home string) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				rest := v[1:]
				if rest != "" && !strings.HasPrefix(rest, "/") || home == "" {
					return "", false // ~user, or no home known
				}
				v = home + rest
			}
			b.WriteString(unescape(v, false))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				switch dp := dp.(type) {
				case *syntax.Lit:
					b.WriteString(unescape(dp.Value, true))
				case *syntax.ParamExp:
					v, ok := homeParam(dp, home)
					if !ok {
						return "", false
					}
					b.WriteString(v)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			v, ok := homeParam(p, home)
			if !ok {
				return "", false
			}
			b.WriteString(v)
		default:
			return "", false
		}
	}
	return b.String(), true
}

func homeParam(p *syntax.ParamExp, home string) (string, bool) {
	if home == "" || p.Param == nil || p.Param.Value != "HOME" || p.Excl || p.Length || p.Width ||
		p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 {
		return "", false
	}
	return home, true
}

// unescape removes the backslashes the shell would.
func unescape(s string, dq bool) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		next := s[i+1]
		if next == '\n' {
			i++
			continue
		}
		if dq && !strings.ContainsRune("$`\"\\", rune(next)) {
			b.WriteByte('\\')
			continue
		}
		b.WriteByte(next)
		i++
	}
	return b.String()
}

func printWord(w *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, w)
	return b.String()
}

func printWords(ws []*syntax.Word) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = printWord(w)
	}
	s := strings.Join(parts, " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// forkBomb refuses functions that call themselves, directly or through
// other functions, where one of the calls runs concurrently (in a pipe or
// in the background): each call then starts two, without end.
func forkBomb(f *syntax.File) *Refusal {
	type edge struct {
		to   string
		conc bool
	}
	funcs := map[string][]edge{}
	var decls []*syntax.FuncDecl
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok {
			decls = append(decls, fd)
		}
		return true
	})
	if len(decls) == 0 {
		return nil
	}
	var calls func(node syntax.Node, conc bool, from string)
	calls = func(node syntax.Node, conc bool, from string) {
		syntax.Walk(node, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Stmt:
				if (n.Background || n.Coprocess) && !conc && n.Cmd != nil {
					calls(n.Cmd, true, from)
					for _, r := range n.Redirs {
						calls(r, true, from)
					}
					return false
				}
			case *syntax.BinaryCmd:
				if (n.Op == syntax.Pipe || n.Op == syntax.PipeAll) && !conc {
					calls(n.X, true, from)
					calls(n.Y, true, from)
					return false
				}
			case *syntax.CoprocClause:
				if !conc {
					calls(n.Stmt, true, from)
					return false
				}
			case *syntax.ProcSubst:
				if !conc {
					for _, st := range n.Stmts {
						calls(st, true, from)
					}
					return false
				}
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					if name, ok := literal(n.Args[0], ""); ok {
						funcs[from] = append(funcs[from], edge{name, conc})
					}
				}
			}
			return true
		})
	}
	for _, fd := range decls {
		names := fd.Names
		if fd.Name != nil {
			names = append(names, fd.Name)
		}
		for _, n := range names {
			if _, seen := funcs[n.Value]; !seen {
				funcs[n.Value] = nil
			}
			if fd.Body != nil {
				calls(fd.Body, false, n.Value)
			}
		}
	}
	reaches := func(from, to string) bool {
		seen := map[string]bool{}
		stack := []string{from}
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if n == to {
				return true
			}
			if seen[n] {
				continue
			}
			seen[n] = true
			for _, e := range funcs[n] {
				if _, isFunc := funcs[e.to]; isFunc {
					stack = append(stack, e.to)
				}
			}
		}
		return false
	}
	for from, es := range funcs {
		for _, e := range es {
			if _, isFunc := funcs[e.to]; !isFunc || !e.conc {
				continue
			}
			if reaches(e.to, from) {
				return &Refusal{Rule: RuleForkBomb, Command: from + "()",
					Reason: fmt.Sprintf("function %s calls itself in a pipe or in the background, so each call starts more without end (a fork bomb)", from)}
			}
		}
	}
	return nil
}
