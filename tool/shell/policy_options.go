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
	// themselves (tar, chattr): it can only refuse more.
	throughDashes bool
}

// option is one option as operands read it.
type option struct {
	short byte   // a short option's letter; 0 for a long option
	long  string // a long option's name: the spec's name it abbreviates, else as written
	given string // a long option's name as written, before any "="
	// value is the option's value: glued on (-ofile, --output=file) or,
	// for an option that takes one, the next word.
	value string
	// takes: the spec says it takes a value. One that finds no word left
	// takes "" (in the following style, none: takes is then false).
	takes bool
	next  int // the index in args of the first word after it and its value
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
			p.ops = append(p.ops, args[i+1:]...)
			if s.stopAtOperand {
				p.afterOpts = args[i+1:]
			}
			return p
		case a != "" && strings.IndexByte(s.signs, a[0]) >= 0:
			i = p.cluster(args, i, a[1:], s, s.following)
		case i == 0 && s.oldStyle && !strings.HasPrefix(a, "-"):
			i = p.cluster(args, i, a, s, true)
		case a == "-" || !strings.HasPrefix(a, "-"):
			if s.stopAtOperand {
				p.ops = append(p.ops, args[i:]...)
				p.afterOpts = args[i:]
				return p
			}
			p.ops = append(p.ops, a)
		case strings.HasPrefix(a, "--"):
			n, v, hasVal := strings.Cut(a[2:], "=")
			o := option{long: n, given: n, value: v}
			for _, l := range s.long {
				if l == n || !s.exactLong && n != "" && strings.HasPrefix(l, n) {
					o.long, o.takes = l, true
					break
				}
			}
			if o.takes && !hasVal && i+1 < len(args) {
				i++
				o.value = args[i]
			}
			o.next = i + 1
			p.opts = append(p.opts, o)
		default:
			i = p.cluster(args, i, a[1:], s, s.following)
		}
	}
	return p
}

// cluster reads the short options clustered in letters, the word args[i]
// (less its dash), and returns the index of the last word it used.
func (p *parsedArgs) cluster(args []string, i int, letters string, s optSpec, following bool) int {
	for j := 0; j < len(letters); j++ {
		o := option{short: letters[j]}
		switch {
		case strings.IndexByte(s.glued, o.short) >= 0:
			o.value, o.takes = letters[j+1:], true
			j = len(letters)
		case strings.IndexByte(s.short, o.short) < 0:
		case following:
			if i+1 < len(args) {
				i++
				o.value, o.takes = args[i], true
			}
		default:
			o.value, o.takes = letters[j+1:], true
			if o.value == "" && i+1 < len(args) {
				i++
				o.value = args[i]
			}
			j = len(letters)
		}
		o.next = i + 1
		p.opts = append(p.opts, o)
	}
	return i
}
