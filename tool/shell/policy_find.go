package shell

import "strings"

// Commands that run other commands on what they find or read: find -exec,
// xargs, parallel.

// findOptions are find's leading options: -H, -L, -P, -D DEBUG, -OLEVEL.
// They end at the first word that is not one of them: a starting point,
// or the expression, whose words start with a dash too (-name, -delete).
var findOptions = optSpec{short: "D", glued: "O", known: "HLPDO", stopAtOperand: true}

// find deletes (-delete) and writes (-fprint …) under its starting
// points, and runs commands on what it finds (-exec): checked with {} as a
// file under each starting point.
func (c *checker) find(_ string, args []string) *Refusal {
	p := operands(args, findOptions)
	follow := p.has('H', "") || p.has('L', "")
	// The starting points run up to the expression.
	rest := p.afterOpts
	n := 0
	for n < len(rest) && !strings.HasPrefix(rest[n], "-") && rest[n] != "(" && rest[n] != "!" && rest[n] != "," && rest[n] != ")" {
		n++
	}
	starts, expr := rest[:n], rest[n:]
	if len(starts) == 0 {
		starts = []string{"."}
	}
	for _, a := range expr {
		if a == "-follow" {
			follow = true
		}
	}
	for j := 0; j < len(expr); j++ {
		a := expr[j]
		switch a {
		case "-delete":
			if follow {
				return c.refuse(RuleUnchecked, "find -L/-follow with -delete follows symlinks out of the workspace; drop -L")
			}
			for _, s := range starts {
				if r := c.path(opDeleteUnder, s); r != nil {
					return r
				}
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if j+1 < len(expr) {
				if r := c.path(opWrite, expr[j+1]); r != nil {
					return r
				}
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(expr) && expr[k] != ";" && expr[k] != "+" {
				k++
			}
			inner := expr[j+1 : k]
			j = k
			if len(inner) == 0 {
				continue
			}
			if follow && changesFiles(commandName(inner[0])) {
				return c.refuse(RuleUnchecked, "find -L/-follow with -exec %s follows symlinks out of the workspace; drop -L", inner[0])
			}
			// {} stands for the files found: check it as a file under
			// each starting point.
			for _, s := range starts {
				stand := strings.TrimSuffix(s, "/") + "/{}"
				argv := make([]string, len(inner))
				for n, w := range inner {
					argv[n] = strings.ReplaceAll(w, "{}", stand)
				}
				if r := c.nested(argv); r != nil {
					return r
				}
			}
		}
	}
	return nil
}

// xargs and parallel run a command on paths read from their input, which
// cannot be checked: only commands that change no files may be given them.
func (c *checker) xargs(name string, args []string) *Refusal {
	p := operands(args, optSpec{short: "aEdILnPs", long: []string{"arg-file", "eof", "delimiter", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, stopAtOperand: true})
	inner := p.afterOpts
	if name == "parallel" {
		// parallel CMD ::: args — the command ends at the first :::.
		for i, a := range inner {
			if strings.HasPrefix(a, ":::") {
				inner = inner[:i]
				break
			}
		}
	}
	if len(inner) == 0 {
		return nil // echo
	}
	if changesFiles(commandName(inner[0])) {
		return c.refuse(RuleUnchecked, "%s %s: the paths come from %s's input and cannot be checked before they run; name the files on the command line, or use find … -delete", name, inner[0], name)
	}
	return c.nested(inner)
}
