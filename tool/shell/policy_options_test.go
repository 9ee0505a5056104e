package shell

import (
	"fmt"
	"strings"
	"testing"
)

// render shows what operands read: each option with its sign (none in
// tar's old style) and its value after = when it takes one, the operands,
// the words after the options, and what ended them.
func render(p parsedArgs) string {
	var opts []string
	for _, o := range p.opts {
		s := "--" + o.long
		if o.short != 0 {
			s = strings.Trim(string(o.sign), "\x00") + string(o.short)
		}
		if o.takes {
			s += "=" + o.value
		}
		opts = append(opts, s)
	}
	return fmt.Sprintf("%s | %s | %s | %s", strings.Join(opts, " "), strings.Join(p.ops, " "), strings.Join(p.afterOpts, " "), p.end)
}

func TestOperands(t *testing.T) {
	for _, tc := range []struct {
		args string
		spec optSpec
		want string
	}{
		// GNU: options anywhere, clusters, values glued or next, prefixes.
		{"-ab -o out a --targ=t b -- -c", optSpec{short: "o", long: []string{"target-directory"}},
			"-a -b -o=out --target-directory=t | a b -c |  | --"},
		{"-oout -xo", optSpec{short: "o"}, "-o=out -x -o= |  |  | "},
		{"--=x --a", optSpec{long: []string{"all"}}, "-- --all= |  |  | "},
		{"-n 5 cmd -x", optSpec{short: "n", stopAtOperand: true}, "-n=5 | cmd -x | cmd -x | "},
		// sed -i.bak: a value only glued on.
		{"-ni.bak -e s f", optSpec{short: "e", glued: "i"}, "-n -i=.bak -e=s | f |  | "},
		// tar: the old style, names in full, -- read through.
		{"xzfC a.tgz dir -- -P --file", optSpec{short: "fC", long: []string{"file"}, exactLong: true, oldStyle: true, throughDashes: true},
			"x z f=a.tgz C=dir -- -P --file= |  |  | "},
		{"xfC a.tgz", optSpec{short: "fC", oldStyle: true}, "x f=a.tgz C |  |  | "},
		// bash: +o, -co NAME, a lone - ends them.
		{"-co pipefail +O x cmd name", shellOptions, "-c -o=pipefail +O=x | cmd name | cmd name | "},
		{"-c - cmd", shellOptions, "-c | cmd | cmd | -"},
		{"--rcfile f -c cmd", shellOptions, "--rcfile=f -c | cmd | cmd | "},
		{"--rcf f", shellOptions, "--rcf | f | f | "},
		// kill: one option word, then processes.
		{"-9 -1", killOptions, "-9 | -1 | -1 | "},
		{"-s HUP -- -1", killOptions, "-s=HUP | -1 | -1 | --"},
		{"5 -1 7", killOptions, " | 5 -1 7 | 5 -1 7 | "},
		// find: only its leading letters are options.
		{"-L -D tree -O3 . -name x", findOptions, "-L -D=tree -O=3 | . -name x | . -name x | "},
		{"-D", findOptions, "-D= |  |  | "},
		// pflag: -v=SRC; peek: a value is read again as a word.
		{"-itv=/:/h -e --privileged", optSpec{short: "ev", eqShort: true, peek: true},
			"-i -t -v=/:/h -e=--privileged --privileged |  |  | "},
		// Long options that take no value, by prefix.
		{"--sys --lo=f", sysctlOptions, "--system --load |  |  | "},
		// chattr's modes.
		{"+i -R =a f", optSpec{signs: "+="}, "+i -R =a | f |  | "},
	} {
		if got := render(operands(strings.Fields(tc.args), tc.spec)); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
}

// These were let through (or crashed the check) before the commands were
// read with the option parser, as the commands read them themselves.
func TestPolicyReadsOptionsAsTheCommandsDo(t *testing.T) {
	p, ws := testPolicy(t)
	for _, tc := range []struct {
		argv []string
		rule string
	}{
		// env: clusters, GNU prefixes, and -S read as env's own words.
		{[]string{"env", "-iu", "X", "rm", "-rf", "/"}, RuleRoot},
		{[]string{"env", "-vC", "/", "rm", "-rf", "etc"}, RuleRoot},
		{[]string{"env", "--ch=/", "rm", "-rf", "etc"}, RuleRoot},
		{[]string{"env", "--u", "X", "rm", "-rf", "/"}, RuleRoot},
		{[]string{"env", "-S", "-i rm -rf /"}, RuleRoot},
		{[]string{"env", "-S", "A=1 rm -rf /"}, RuleRoot},
		{[]string{"env", "-0S", "rm -rf /"}, RuleRoot},
		{[]string{"env", "-i", "FOO=1", "go", "test"}, ""},
		// kill: a dash after a process is a process group; -s takes a
		// signal, not a process.
		{[]string{"kill", "123", "-1", "456"}, RuleKillAll},
		{[]string{"kill", "-s", "HUP", "-1"}, RuleKillAll},
		{[]string{"kill", "-9", "--", "-1"}, RuleKillAll},
		{[]string{"kill", "-n", "1", "1234"}, ""},
		// command: -v is an option of command's only before the command.
		{[]string{"command", "rm", "-rf", "-v", "/"}, RuleRoot},
		{[]string{"zsh", "-c", "command rm -rf -v /"}, RuleRoot},
		{[]string{"command", "-pv", "rm"}, ""},
		// find: -- ends the leading options; -D without a value.
		{[]string{"find", "--", "/", "-delete"}, RuleRoot},
		{[]string{"find", "-D"}, ""},
		{[]string{"find", "-D", "tree", "/", "-delete"}, RuleRoot},
		{[]string{"find", "-O3", "-L", ".", "-delete"}, RuleUnchecked},
		// sysctl: -f, -pFILE, clusters and prefixes load settings.
		{[]string{"sysctl", "-f"}, RuleDisk},
		{[]string{"sysctl", "-p./kernel.conf"}, RuleDisk},
		{[]string{"sysctl", "-ep"}, RuleDisk},
		{[]string{"sysctl", "--sys"}, RuleDisk},
		{[]string{"sysctl", "-n", "kernel.hostname"}, ""},
		// docker and podman: pflag's clusters and -v=SRC.
		{[]string{"docker", "run", "-itv", "/:/h", "alpine"}, RuleRoot},
		{[]string{"docker", "run", "-v=/:/h", "alpine"}, RuleRoot},
		{[]string{"docker", "run", "-iv/etc:/e", "alpine"}, RuleSystem},
		{[]string{"podman", "run", "-hw", "--pid=host", "alpine"}, RulePrivilege},
		{[]string{"docker", "run", "-e", "--privileged", "alpine"}, RulePrivilege},
		{[]string{"docker", "volume", "create", "-o=o=bind", "x"}, RuleUnchecked},
		{[]string{"docker", "run", "-eVAR=v/x", "-w/srv/app", "alpine"}, ""},
	} {
		err := p.Check(tc.argv, ws)
		got := ""
		if r, ok := err.(*Refusal); ok {
			got = r.Rule
		} else if err != nil {
			t.Errorf("%q: not a *Refusal: %v", tc.argv, err)
		}
		if got != tc.rule {
			t.Errorf("%q: rule %q, want %q (%v)", tc.argv, got, tc.rule, err)
		}
	}
}
