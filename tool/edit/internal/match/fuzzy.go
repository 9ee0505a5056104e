package match

import (
	"sort"
	"strings"
)

// Fuzzy matching compares lines, not characters: old_string's lines are
// aligned with a window of file lines (allowing a few lines missing or
// added on either side) and the score is the similarity of the aligned
// lines, weighted by their lengths, like difflib's ratio: 1 for the same
// lines, 0 for nothing in common.
//
// Windows worth scoring are found cheaply first: a pass over the file
// hashes each line (whitespace-normalised) and every line equal to one of
// old_string's distinctive lines votes for the window it would sit in. When
// no line is equal anywhere (a one-line old_string with a typo), a second
// pass compares old_string's longest line with every file line of similar
// length, after a character-count filter. Each step draws on a work budget
// so that a 10 MB file stays fast.

const (
	// maxCandidates is how many windows are scored.
	maxCandidates = 48
	// maxFuzzyLines: longer old_strings are not matched fuzzily.
	maxFuzzyLines = 2000
	// lineFloor: aligned lines less similar than this count as unrelated.
	lineFloor = 0.5
)

type alignOp struct {
	s, f int // search line, file line (absolute); -1 when skipped
	sim  float64
}

// fuzzyHit is a scored window: file lines first..last (0-based,
// inclusive).
type fuzzyHit struct {
	first, last int
	score       float64
	ops         []alignOp
	// anchored: old_string's first and last lines both match lines of the
	// window closely, so its ends are certain. Only anchored hits are
	// used as matches.
	anchored bool
	// shownFirst and shownLast widen the window, for showing it, over
	// lines of old_string that matched nothing at either end.
	shownFirst, shownLast int
}

type fuzzyResult struct {
	best *fuzzyHit
	// others are the scored windows apart from best, best first.
	others []*fuzzyHit
	// crowded: too many windows look alike to tell them apart.
	crowded bool
	// exhausted: the work budget ran out before the search was done.
	exhausted bool
}

type fuzzer struct {
	x      *lineIndex
	sn     []string // old_string's lines, normalised
	sw     []int    // their weights
	band   int
	budget *int
	norms  map[int]string
	sims   map[[2]int]float64
	tried  map[int]bool
	hits   []*fuzzyHit
}

// fuzzySearch finds the window of x most similar to lines, and the best
// window not overlapping it.
func fuzzySearch(x *lineIndex, lines []string, budget *int) fuzzyResult {
	n := len(lines)
	if n == 0 || n > maxFuzzyLines || x.count() == 0 {
		return fuzzyResult{}
	}
	fz := &fuzzer{x: x, band: min(2+n/20, 8), budget: budget,
		norms: map[int]string{}, sims: map[[2]int]float64{}, tried: map[int]bool{}}
	total := 0
	for _, l := range lines {
		s := normLine(l)
		fz.sn = append(fz.sn, s)
		fz.sw = append(fz.sw, len(s)+1)
		total += len(s)
	}
	if total < 6 {
		return fuzzyResult{} // too little to go on
	}
	var res fuzzyResult
	cand, crowded := fz.anchorVotes()
	res.crowded = crowded
	fz.evaluate(cand)
	if best := fz.best(); (best == nil || best.score < DefaultThreshold) && !crowded && *budget > 0 {
		fz.evaluate(fz.nearVotes())
	}
	res.exhausted = *budget <= 0
	res.best = fz.best()
	if res.best != nil {
		for _, h := range fz.hits {
			if h.last < res.best.first || h.first > res.best.last {
				res.others = append(res.others, h)
			}
		}
		sort.Slice(res.others, func(a, b int) bool { return res.others[a].score > res.others[b].score })
	}
	return res
}

// rivals returns the windows apart from best that are about as similar to
// old_string as it is (at least th, or within 0.05 of it) and that best does
// not dominate. Best dominates a window when each of old_string's lines is
// at least as similar to its line in best as to its line in the window, and
// some line clearly more: the model copied best and changed a line, rather
// than copying the other. With no rivals, best is the match.
func (r fuzzyResult) rivals(th float64) []*fuzzyHit {
	var out []*fuzzyHit
next:
	for _, h := range r.others {
		if h.score < th && h.score < r.best.score-0.05 || dominates(r.best, h) {
			continue
		}
		for _, o := range out {
			if h.first <= o.last && h.last >= o.first {
				continue next // the same place, aligned a little differently
			}
		}
		out = append(out, h)
	}
	return out
}

func dominates(a, b *fuzzyHit) bool {
	sa, sb := a.lineSims(), b.lineSims()
	clearly := false
	for j := range sa {
		if j >= len(sb) {
			break
		}
		if sa[j] < sb[j] {
			return false
		}
		if sa[j] >= sb[j]+0.05 {
			clearly = true
		}
	}
	return clearly
}

// lineSims is the similarity of each of old_string's lines to the line it
// is aligned with (0 when it is aligned with none).
func (h *fuzzyHit) lineSims() []float64 {
	n := 0
	for _, op := range h.ops {
		n = max(n, op.s+1)
	}
	out := make([]float64, n)
	for _, op := range h.ops {
		if op.s >= 0 && op.f >= 0 {
			out[op.s] = op.sim
		}
	}
	return out
}

func (fz *fuzzer) best() *fuzzyHit {
	var b *fuzzyHit
	for _, h := range fz.hits {
		if b == nil || h.score > b.score {
			b = h
		}
	}
	return b
}

// trivial lines ("}", "end", "");") say nothing about where a block is.
func trivial(s string) bool {
	if len(s) < 4 {
		return true
	}
	for i := 0; i < len(s); i++ {
		if isWord(s[i]) {
			return false
		}
	}
	return true
}

// hashNorm hashes a line as normLine would normalise it, without
// allocating.
func hashNorm(l string) uint64 {
	const prime = 1099511628211
	h := uint64(14695981039346656037)
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	space := false
	for ; i < len(l); i++ {
		c := l[i]
		if isSpace(c) {
			space = true
			continue
		}
		if space {
			h = (h ^ ' ') * prime
			space = false
		}
		h = (h ^ uint64(c)) * prime
	}
	return h
}

type vote struct{ start, weight int }

// anchorVotes: every file line equal to a distinctive line of old_string
// votes for the window that would put them side by side.
func (fz *fuzzer) anchorVotes() ([]vote, bool) {
	anchors := map[uint64][]int{}
	for j, s := range fz.sn {
		if !trivial(s) {
			h := hashNorm(s)
			anchors[h] = append(anchors[h], j)
		}
	}
	if len(anchors) == 0 {
		for j, s := range fz.sn {
			if s != "" {
				h := hashNorm(s)
				anchors[h] = append(anchors[h], j)
			}
		}
	}
	votes := map[int]int{}
	x := fz.x
	*fz.budget -= len(x.text) / 8
	for i := 0; i < x.count(); i++ {
		js, ok := anchors[hashNorm(x.line(i))]
		if !ok {
			continue
		}
		for _, j := range js {
			votes[i-j] += fz.sw[j]
		}
		if len(votes) > 1_000_000 {
			break
		}
	}
	return topVotes(votes)
}

// topVotes returns the most voted windows, and whether too many tie near
// the top to tell apart.
func topVotes(votes map[int]int) ([]vote, bool) {
	vs := make([]vote, 0, len(votes))
	for s, w := range votes {
		vs = append(vs, vote{s, w})
	}
	sort.Slice(vs, func(a, b int) bool {
		if vs[a].weight != vs[b].weight {
			return vs[a].weight > vs[b].weight
		}
		return vs[a].start < vs[b].start
	})
	crowded := false
	if len(vs) > maxCandidates {
		crowded = vs[maxCandidates].weight*10 >= vs[0].weight*9
		vs = vs[:maxCandidates]
	}
	return vs, crowded
}

// nearVotes: file lines similar to old_string's longest line vote.
func (fz *fuzzer) nearVotes() []vote {
	j := 0
	for k, s := range fz.sn {
		if len(s) > len(fz.sn[j]) {
			j = k
		}
	}
	target := fz.sn[j]
	if len(target) < 6 {
		return nil
	}
	// Character counts of the target, and the characters it has.
	var tc, bc [256]int32
	var chars []byte
	for i := 0; i < len(target); i++ {
		c := target[i]
		if c == ' ' {
			continue
		}
		if tc[c] == 0 {
			chars = append(chars, c)
		}
		tc[c]++
	}
	nonSpace := len(target) - strings.Count(target, " ")
	votes := map[int]int{}
	x := fz.x
	for i := 0; i < x.count() && *fz.budget > 0; i++ {
		_, body := splitIndent(x.line(i))
		lb := len(body)
		if lb*2 < len(target) || lb > len(target)*2 {
			continue
		}
		// The bag distance (characters one side has and the other lacks)
		// is a lower bound of the edit distance: a cheap filter before
		// the real comparison.
		*fz.budget -= lb
		ns := 0
		for k := 0; k < lb; k++ {
			if c := body[k]; !isSpace(c) {
				bc[c]++
				ns++
			}
		}
		missing, common := 0, 0
		for _, c := range chars {
			if tc[c] > bc[c] {
				missing += int(tc[c] - bc[c])
				common += int(bc[c])
			} else {
				common += int(tc[c])
			}
		}
		for k := 0; k < lb; k++ {
			bc[body[k]] = 0
		}
		extra := ns - common
		if float64(max(missing, extra)) > float64(max(nonSpace, ns))*(1-0.6) {
			continue
		}
		if s := fz.sim(j, i); s >= 0.6 {
			votes[i-j] += int(s * float64(fz.sw[j]))
		}
	}
	vs, _ := topVotes(votes)
	return vs
}

// evaluate scores the windows voted for, and their neighbours.
func (fz *fuzzer) evaluate(vs []vote) {
	for _, v := range vs {
		for _, c := range [3]int{v.start, v.start - 1, v.start + 1} {
			if fz.tried[c] || *fz.budget <= 0 {
				continue
			}
			fz.tried[c] = true
			if h := fz.align(c); h != nil {
				fz.hits = append(fz.hits, h)
			}
		}
	}
}

func (fz *fuzzer) norm(i int) string {
	s, ok := fz.norms[i]
	if !ok {
		s = normLine(fz.x.line(i))
		fz.norms[i] = s
	}
	return s
}

// sim is the similarity of old_string's line j and file line i: 1 - edit
// distance / longer length, 0 below lineFloor.
func (fz *fuzzer) sim(j, i int) float64 {
	key := [2]int{j, i}
	if s, ok := fz.sims[key]; ok {
		return s
	}
	a, b := fz.sn[j], fz.norm(i)
	s := similarity(a, b, fz.budget)
	fz.sims[key] = s
	return s
}

func similarity(a, b string, budget *int) float64 {
	if a == b {
		return 1
	}
	la, lb := len(a), len(b)
	if la == 0 || lb == 0 {
		return 0
	}
	long := max(la, lb)
	limit := int(float64(long) * (1 - lineFloor)) // the most edits worth counting
	if abs(la-lb) > limit {
		return 0
	}
	if la*lb > 1_000_000 {
		// Very long lines (minified code): their lengths say enough.
		return 0
	}
	*budget -= la * lb
	d := levenshtein(a, b, limit)
	if d > limit {
		return 0
	}
	s := 1 - float64(d)/float64(long)
	if s < lineFloor {
		return 0
	}
	return s
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// levenshtein returns the edit distance of a and b in bytes, or a number
// above limit once it is certain to exceed it.
func levenshtein(a, b string, limit int) int {
	if len(a) > len(b) {
		a, b = b, a
	}
	prev := make([]int, len(a)+1)
	cur := make([]int, len(a)+1)
	for i := range prev {
		prev[i] = i
	}
	for j := 1; j <= len(b); j++ {
		cur[0] = j
		rowMin := cur[0]
		for i := 1; i <= len(a); i++ {
			c := prev[i-1]
			if a[i-1] != b[j-1] {
				c = min(c, prev[i], cur[i-1]) + 1
			}
			cur[i] = c
			rowMin = min(rowMin, c)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(a)]
}

// align scores the window of file lines starting at c against old_string,
// allowing up to band lines skipped on either side, and returns the best
// alignment.
func (fz *fuzzer) align(c int) *fuzzyHit {
	n, B := len(fz.sn), fz.band
	lo := max(c, 0)
	hi := min(fz.x.count(), c+n+B)
	W := hi - lo
	if W <= 0 {
		return nil
	}
	width := 2*B + 1
	dp := make([]float64, (n+1)*width)
	mv := make([]uint8, (n+1)*width)
	for k := range dp {
		dp[k] = -1
	}
	at := func(i, j int) int {
		d := j - i + B
		if d < 0 || d >= width || j < 0 || j > W {
			return -1
		}
		return i*width + d
	}
	dp[at(0, 0)] = 0
	for i := 0; i <= n; i++ {
		for j := max(0, i-B); j <= min(W, i+B); j++ {
			if i == 0 && j == 0 {
				continue
			}
			best, how := -1.0, uint8(0)
			if i > 0 && j > 0 {
				if p := at(i-1, j-1); p >= 0 && dp[p] >= 0 {
					s := fz.sim(i-1, lo+j-1)
					v := dp[p] + s*float64(fz.sw[i-1]+len(fz.norm(lo+j-1))+1)
					best, how = v, 0
				}
			}
			if i > 0 {
				if p := at(i-1, j); p >= 0 && dp[p] > best {
					best, how = dp[p], 1
				}
			}
			if j > 0 {
				if p := at(i, j-1); p >= 0 && dp[p] > best {
					best, how = dp[p], 2
				}
			}
			k := at(i, j)
			dp[k], mv[k] = best, how
		}
	}
	sumS := 0
	for _, w := range fz.sw {
		sumS += w
	}
	// Choose the end of the window: the one that matches the most, and of
	// those the shortest. (The best ratio would cut off unmatched lines at
	// the end, which then stay in the file beside their replacement.)
	bestJ, bestMass := -1, 0.0
	for j := 1; j <= W; j++ {
		if k := at(n, j); k >= 0 && dp[k] > bestMass {
			bestJ, bestMass = j, dp[k]
		}
	}
	if bestJ < 0 {
		return nil
	}
	// Trace the alignment back.
	var ops []alignOp
	for i, j := n, bestJ; i > 0 || j > 0; {
		k := at(i, j)
		switch mv[k] {
		case 0:
			ops = append(ops, alignOp{s: i - 1, f: lo + j - 1, sim: fz.sim(i-1, lo+j-1)})
			i, j = i-1, j-1
		case 1:
			ops = append(ops, alignOp{s: i - 1, f: -1})
			i--
		default:
			ops = append(ops, alignOp{s: -1, f: lo + j - 1})
			j--
		}
	}
	for a, b := 0, len(ops)-1; a < b; a, b = a+1, b-1 {
		ops[a], ops[b] = ops[b], ops[a]
	}
	// Drop file lines skipped before the first and after the last line
	// that matched anything: the window is what matched.
	for len(ops) > 0 && ops[0].s < 0 {
		ops = ops[1:]
	}
	for len(ops) > 0 && ops[len(ops)-1].s < 0 {
		ops = ops[:len(ops)-1]
	}
	first, last := -1, -1
	matched := 0.0
	for _, op := range ops {
		if op.f < 0 {
			continue
		}
		if first < 0 {
			first = op.f
		}
		last = op.f
		if op.s >= 0 {
			matched += op.sim * float64(fz.sw[op.s]+len(fz.norm(op.f))+1)
		}
	}
	if first < 0 {
		return nil
	}
	sumF := 0
	for f := first; f <= last; f++ {
		sumF += len(fz.norm(f)) + 1
	}
	h := &fuzzyHit{first: first, last: last, score: matched / float64(sumS+sumF), ops: ops}
	const anchor = 0.8
	h.anchored = ops[0].f >= 0 && ops[0].s == 0 && ops[0].sim >= anchor &&
		ops[len(ops)-1].f >= 0 && ops[len(ops)-1].s == n-1 && ops[len(ops)-1].sim >= anchor
	lead, trail := 0, 0
	for lead < len(ops) && ops[lead].f < 0 {
		lead++
	}
	for trail < len(ops) && ops[len(ops)-1-trail].f < 0 {
		trail++
	}
	h.shownFirst = max(0, first-lead)
	h.shownLast = min(fz.x.count()-1, last+trail)
	return h
}

// fuzzySpan makes the span for a fuzzy hit: the window's lines replaced by
// new_string, re-indented when the aligned lines show a consistent shift.
// It fails when the aligned lines are indented with a different structure:
// in an indentation-sensitive language that is a different program.
func (q *lineQuery) fuzzySpan(x *lineIndex, h *fuzzyHit) (Span, bool) {
	var sl, fl []string
	for _, op := range h.ops {
		if op.s >= 0 && op.f >= 0 && op.sim >= 0.7 && !isBlank(q.lines[op.s]) {
			sl = append(sl, q.lines[op.s])
			fl = append(fl, x.line(op.f))
		}
	}
	var m *indentMap
	if len(sl) > 0 {
		var ok bool
		if m, ok = newIndentMap(sl, fl, ""); !ok {
			return Span{}, false
		}
		if m.identity {
			m = nil
		} else {
			m.fileUnit = detectUnit(x, h.first)
		}
	}
	return q.span(x, h.first, h.last, m), true
}

// passage describes a fuzzy hit for a model that missed: the lines, and
// where they first differ from old_string.
func (q *lineQuery) passage(x *lineIndex, h *fuzzyHit) *Passage {
	p := &Passage{Line: h.shownFirst + 1, Score: h.score}
	for i := h.shownFirst; i <= h.shownLast; i++ {
		p.Text = append(p.Text, x.line(i))
	}
	prevF := h.first - 1
	for _, op := range h.ops {
		switch {
		case op.s >= 0 && op.f >= 0:
			_, fb := splitIndent(x.line(op.f))
			if !flexEqual(q.bodies[op.s], fb) {
				p.DiffLine, p.FileText, p.OldText = op.f+1, x.line(op.f), q.lines[op.s]
				return p
			}
			prevF = op.f
		case op.s >= 0:
			if q.bodies[op.s] == "" {
				continue
			}
			p.DiffLine, p.OldText, p.Extra = prevF+2, q.lines[op.s], true
			if prevF+1 < x.count() {
				p.FileText = x.line(prevF + 1)
			}
			return p
		default:
			if isBlank(x.line(op.f)) {
				prevF = op.f
				continue
			}
			p.DiffLine, p.FileText = op.f+1, x.line(op.f)
			return p
		}
	}
	return p
}
