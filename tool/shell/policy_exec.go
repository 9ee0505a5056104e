package shell

import (
	"path/filepath"
	"strings"

	"github.com/hearth-agent/hearth/sandbox"
)

// Commands that run another (exec, command, builtin, env, nice, timeout,
// …), and changing the working directory.

// exec runs its operands in place of the shell.
func (c *checker) exec(_ string, args []string) *Refusal {
	return c.nested(operands(args, optSpec{short: "a", stopAtOperand: true}).afterOpts)
}

// command runs its operands, bypassing functions; with -v or -V it only
// looks them up.
func (c *checker) command(_ string, args []string) *Refusal {
	p := operands(args, optSpec{stopAtOperand: true})
	if p.has('v', "") || p.has('V', "") {
		return nil // a lookup: runs nothing
	}
	return c.nested(p.afterOpts)
}

// builtin runs its operands as a shell builtin.
func (c *checker) builtin(_ string, args []string) *Refusal {
	return c.nested(args)
}

// cd and pushd may change only into the workspace (or $TMPDIR).
func (c *checker) cd(name string, args []string) *Refusal {
	ops := operands(args, optSpec{}).ops
	if len(ops) == 0 {
		if c.p.Home == "" {
			return nil
		}
		ops = []string{c.p.Home}
	}
	if ops[0] == "-" || strings.HasPrefix(ops[0], "+") || (name == "pushd" && strings.HasPrefix(ops[0], "-")) {
		return nil // back to a directory already checked
	}
	return c.path(opChdir, ops[0])
}

// envOptions are GNU env's options that take a value; they end at the
// first operand.
var envOptions = optSpec{short: "uCS", long: []string{"unset", "chdir", "split-string"}, stopAtOperand: true}

// env runs a command with a changed environment, and perhaps directory
// (-C) or words split from a string (-S).
func (c *checker) env(_ string, args []string) *Refusal {
	sub := *c
	p := operands(args, envOptions)
	for _, o := range p.opts {
		switch {
		case o.short == 'C' || o.short == 0 && o.long == "chdir":
			d := o.value
			if r := sub.path(opChdir, d); r != nil {
				return r
			}
			if real, err := sandbox.RealPath(sub.dir, d, true); err == nil && sub.dir != "" || filepath.IsAbs(d) {
				sub.dir = real
			}
		case o.short == 'S' || o.short == 0 && o.long == "split-string":
			// env reads the words of the string in its place: options,
			// NAME=VALUE and the command.
			return sub.nested(append(append([]string{"env"}, strings.Fields(o.value)...), args[o.next:]...))
		}
	}
	ops := p.afterOpts
	if len(ops) > 0 && ops[0] == "-" {
		ops = ops[1:] // env - is env -i
	}
	for len(ops) > 0 && strings.Contains(ops[0], "=") && !strings.HasPrefix(ops[0], "=") {
		ops = ops[1:] // NAME=VALUE
	}
	return sub.nested(ops)
}

// wrapper describes a command that runs another: its options, and how many
// operands come before the command (timeout's duration, flock's file).
type wrapper struct {
	spec optSpec
	lead int
	// leadWrites: the lead operands are files it writes (flock).
	leadWrites bool
	// stringOpt names an option whose value is a shell command (flock -c).
	stringOpt string
	// joined: the remaining words are joined and run by sh -c (watch).
	joined bool
	// writes lists options whose values are files it writes.
	writes [][2]string
}

// wrappers are the commands that run another, by name.
var wrappers = map[string]wrapper{
	"nice":       {spec: optSpec{short: "n", long: []string{"adjustment"}}},
	"nohup":      {},
	"time":       {spec: optSpec{short: "fo", long: []string{"format", "output"}}, writes: [][2]string{{"o", "output"}}},
	"timeout":    {spec: optSpec{short: "ks", long: []string{"kill-after", "signal"}}, lead: 1},
	"stdbuf":     {spec: optSpec{short: "ioe", long: []string{"input", "output", "error"}}},
	"ionice":     {spec: optSpec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}}},
	"chrt":       {spec: optSpec{short: "T", long: []string{"sched-runtime", "sched-deadline", "sched-period"}}, lead: 1},
	"taskset":    {lead: 1},
	"flock":      {spec: optSpec{short: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}}, lead: 1, leadWrites: true, stringOpt: "c"},
	"watch":      {spec: optSpec{short: "nq", long: []string{"interval", "equexit"}}, joined: true},
	"strace":     {spec: optSpec{short: "abeEoOpPsSuUIX", long: []string{"output", "trace", "signal", "user"}}, writes: [][2]string{{"o", "output"}}},
	"ltrace":     {spec: optSpec{short: "aAeEFlnoOpsuwX", long: []string{"output"}}, writes: [][2]string{{"o", "output"}}},
	"unbuffer":   {},
	"caffeinate": {spec: optSpec{short: "tw"}},
	"nocache":    {},
	"catchsegv":  {},
	"valgrind":   {},
	"script":     {spec: optSpec{short: "cEIOTB", long: []string{"command", "echo", "log-in", "log-out", "log-timing", "log-io"}}, stringOpt: "c", writes: [][2]string{{"I", "log-in"}, {"O", "log-out"}, {"T", "log-timing"}, {"B", "log-io"}}},
}

// wrapper checks a command in wrappers: the files it writes, and what it
// runs.
func (c *checker) wrapper(name string, args []string) *Refusal {
	w := wrappers[name]
	w.spec.stopAtOperand = true
	p := operands(args, w.spec)
	for _, o := range w.writes {
		if r := c.paths(opWrite, dropStdio(p.values(o[0], o[1]))); r != nil {
			return r
		}
	}
	if w.stringOpt != "" {
		// The command string may come after the operands (flock FILE -c CMD).
		all := operands(args, optSpec{short: w.stringOpt + w.spec.short, long: w.spec.long})
		for _, s := range all.values(w.stringOpt, "command") {
			sub := *c
			sub.depth++
			if r := sub.script(s, true); r != nil {
				return r
			}
		}
	}
	rest := p.afterOpts
	if name == "script" {
		return c.paths(opWrite, rest) // script [file]: the typescript it writes
	}
	if len(rest) < w.lead {
		return nil
	}
	if w.leadWrites {
		if r := c.paths(opWrite, rest[:w.lead]); r != nil {
			return r
		}
	}
	rest = rest[w.lead:]
	if w.joined {
		if len(rest) == 0 {
			return nil
		}
		sub := *c
		sub.depth++
		return sub.script(strings.Join(rest, " "), true)
	}
	return c.nested(rest)
}
