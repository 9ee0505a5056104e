package shell

import "strings"

// The policy's one option parser. Every checker that looks at a command's
// options reads them through operands, with an optSpec saying how that
// command spells them: GNU style unless the spec says otherwise.

// optSpec says how a command spells its options: which take a value, and
// where they end. The zero optSpec reads GNU-style options that take no
// value: options may follow operands, "--" ends them, short options
// cluster, long ones may be abbreviated.
type optSpec struct {
	short string   // short options that take a value: the rest of the word, or the next word
	long  []string // long options that take a value (GNU prefixes accepted)
	// stopAtOperand: options end at the first operand (the command a
	// wrapper runs has its own options).
	stopAtOperand bool

	// The rest describe syntaxes other than GNU's.

	// glued lists short options whose value, if any, is glued on, never
	// the next word: sed -i.bak, perl -i.
	glued string
	// exactLong: long options are known only spelled out in full, never
	// by a prefix (tar, the shells).
	exactLong bool
	// following: each option in a cluster that takes a value takes the
	// next word, in order, and the cluster goes on (bash -co pipefail is
	// -c, and -o pipefail).
	following bool
	// oldStyle: a first word without a dash is a cluster of options whose
	// values follow it, one word each (tar xzf a.tgz).
	oldStyle bool
	// signs lists the characters besides '-' that start a cluster of
	// options: "+" for the shells' +o, "+=" for chattr's modes.
	signs string
	// loneDashEnds: a lone "-" ends the options as "--" does (sh -).
	loneDashEnds bool
	// throughDashes: "--" does not end the options, so that a later -C or
	// -P still counts. For commands read more warily than they read
	// themselves (tar, chattr, docker): it can only refuse more.
	throughDashes bool
	// single: the options end after the first option word (and a "--"
	// right after it): kill -9 -1, where -1 is a process group.
	single bool
	// known lists the only letters that start an option: a word whose
	// first letter is another is an operand (find -L, then its expression,
	// whose words start with a dash too: -name, -delete).
	known string
	// eqShort: -v=VALUE is -v VALUE, as pflag reads it (docker, podman).
	eqShort bool
	// flags lists long options that take no value, so that their GNU
	// prefixes are known too (sysctl --sys is --system).
	flags []string
	// peek: a value taken from the next word is read again as a word of
	// its own, an option perhaps. For commands whose options the policy
	// does not all know (docker): no word escapes being looked at.
	peek bool
}

// option is one option as operands read it.
type option struct {
	short byte   // a short option's letter; 0 for a long option
	sign  byte   // what a short option's cluster starts with: '-', one of the spec's signs, or 0 (tar's old style)
	long  string // a long option's name: the spec's name it abbreviates, else as written
	given string // a long option's name as written, before any "="
	// value is the option's value: glued on (-ofile, --output=file) or,
	// for an option that takes one, the next word.
	value string
	// takes: the spec says it takes a value. One that finds no word left
	// takes "" (in the following style, none: takes is then false).
	takes bool
	next  int // the index in args of the first word after it and its value (unless the spec peeks)
}

// parsedArgs is a command's arguments, read as options and operands.
type parsedArgs struct {
	opts      []option // in the order given
	ops       []string
	afterOpts []string // everything from the first operand (stopAtOperand)
	end       string   // the word that ended the options ("--", or "-" with loneDashEnds); "" when none did
}

// values returns the values of the option spelled -short or --long: those
// of the short one first.
func (p parsedArgs) values(short, long string) []string {
	var out []string
	if short != "" {
		for _, o := range p.opts {
			if o.takes && o.short != 0 && string(o.short) == short {
				out = append(out, o.value)
			}
		}
	}
	if long != "" {
		for _, o := range p.opts {
			if o.takes && o.short == 0 && o.long == long {
				out = append(out, o.value)
			}
		}
	}
	return out
}

// has reports whether the option -short or --long was given.
func (p parsedArgs) has(short byte, long string) bool {
	for _, o := range p.opts {
		if short != 0 && o.short == short || long != "" && o.short == 0 && o.long == long {
			return true
		}
	}
	return false
}

// operands splits args into options and operands, as s says.
func operands(args []string, s optSpec) parsedArgs {
	var p parsedArgs
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" && !s.throughDashes, a == "-" && s.loneDashEnds:
			p.end = a
			p.rest(args[i+1:], s)
			return p
		case a != "" && strings.IndexByte(s.signs, a[0]) >= 0:
			i = p.cluster(args, i, a[0], a[1:], s, s.following)
		case i == 0 && s.oldStyle && !strings.HasPrefix(a, "-"):
			i = p.cluster(args, i, 0, a, s, true)
		case a == "-" || !strings.HasPrefix(a, "-"),
			s.known != "" && !strings.HasPrefix(a, "--") && strings.IndexByte(s.known, a[1]) < 0:
			if s.stopAtOperand {
				p.rest(args[i:], s)
				return p
			}
			p.ops = append(p.ops, a)
			continue
		case strings.HasPrefix(a, "--"):
			i = p.long(args, i, s)
		default:
			i = p.cluster(args, i, '-', a[1:], s, s.following)
		}
		if s.single {
			rest := args[i+1:]
			if len(rest) > 0 && rest[0] == "--" && !s.throughDashes {
				p.end, rest = "--", rest[1:]
			}
			p.rest(rest, s)
			return p
		}
	}
	return p
}

// rest takes the words left as operands.
func (p *parsedArgs) rest(words []string, s optSpec) {
	p.ops = append(p.ops, words...)
	if s.stopAtOperand {
		p.afterOpts = words
	}
}

// long reads the long option args[i], and returns the index of the last
// word it used.
func (p *parsedArgs) long(args []string, i int, s optSpec) int {
	n, v, hasVal := strings.Cut(args[i][2:], "=")
	o := option{long: n, given: n, value: v}
	is := func(l string) bool { return l == n || !s.exactLong && n != "" && strings.HasPrefix(l, n) }
	for _, l := range s.long {
		if is(l) {
			o.long, o.takes = l, true
			break
		}
	}
	for _, l := range s.flags {
		if !o.takes && is(l) {
			o.long = l
			break
		}
	}
	if o.takes && !hasVal {
		i = p.takeNext(args, i, s, &o)
	}
	o.next = i + 1
	p.opts = append(p.opts, o)
	return i
}

// takeNext gives o the word after args[i] as its value, if there is one,
// and returns the index of the last word used (args[i] itself when the
// spec peeks).
func (p *parsedArgs) takeNext(args []string, i int, s optSpec, o *option) int {
	if i+1 >= len(args) {
		return i
	}
	o.value = args[i+1]
	if s.peek {
		return i
	}
	return i + 1
}

// cluster reads the short options clustered in letters, the word args[i]
// (less its sign), and returns the index of the last word it used.
func (p *parsedArgs) cluster(args []string, i int, sign byte, letters string, s optSpec, following bool) int {
	for j := 0; j < len(letters); j++ {
		o := option{short: letters[j], sign: sign}
		switch {
		case strings.IndexByte(s.glued, o.short) >= 0:
			o.value, o.takes = letters[j+1:], true
			j = len(letters)
		case strings.IndexByte(s.short, o.short) < 0:
		case following:
			if i+1 < len(args) {
				o.takes = true
				i = p.takeNext(args, i, s, &o)
			}
		default:
			o.value, o.takes = letters[j+1:], true
			if s.eqShort && len(o.value) > 1 && o.value[0] == '=' {
				o.value = o.value[1:]
			}
			if o.value == "" {
				i = p.takeNext(args, i, s, &o)
			}
			j = len(letters)
		}
		o.next = i + 1
		p.opts = append(p.opts, o)
	}
	return i
}
