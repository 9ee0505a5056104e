package pricing

import (
	"math"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"0", 0, ""},
		{"0.15", 150_000, ""},
		{"3", 3_000_000, ""},
		{"15.00", 15_000_000, ""},
		{"0.000001", 1, ""},
		{"1.234567", 1_234_567, ""},
		{"0.1500000", 150_000, ""},
		{"007.5", 7_500_000, ""},
		{" 2.5\n", 2_500_000, ""},
		{"9223372036854.775807", math.MaxInt64, ""},
		{"9223372036854.775808", 0, "too large"},
		{"9223372036855", 0, "too large"},
		{"99999999999999999999999", 0, "too large"},
		{"0.0000001", 0, "more than 6 digits"},
		{"0.1234567", 0, "more than 6 digits"},
		{"-1", 0, "negative"},
		{"", 0, "no amount"},
		{"   ", 0, "no amount"},
		{".5", 0, "not a decimal"},
		{"5.", 0, "not a decimal"},
		{"1e-6", 0, "not a decimal"},
		{"+1", 0, "not a decimal"},
		{"1,5", 0, "not a decimal"},
		{"1_000", 0, "not a decimal"},
		{"0x10", 0, "not a decimal"},
		{"1.2.3", 0, "not a decimal"},
		{"٣", 0, "not a decimal"},
		{"NaN", 0, "not a decimal"},
	} {
		got, err := Parse(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse(%q) = %d, %v; want an error with %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[int64]string{
		0: "0", 1: "0.000001", 150_000: "0.15", 3_000_000: "3", 1_234_567: "1.234567", 10_000_010: "10.00001",
		-1: "-0.000001", -2_500_000: "-2.5", math.MaxInt64: "9223372036854.775807", math.MinInt64: "-9223372036854.775808",
	} {
		if got := Format(in); got != want {
			t.Errorf("Format(%d) = %q, want %q", in, got, want)
		}
		if in >= 0 {
			if back, err := Parse(want); err != nil || back != in {
				t.Errorf("Parse(Format(%d)) = %d, %v", in, back, err)
			}
		}
	}
}

func TestRates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		p       Price
		want    Rates
		wantErr string
	}{
		{"all three", Price{Input: "0.15", Output: "0.6", CachedInput: "0.075"}, Rates{150_000, 600_000, 75_000}, ""},
		{"cached as input", Price{Input: "3", Output: "15"}, Rates{3_000_000, 15_000_000, 3_000_000}, ""},
		{"free", Price{Input: "0", Output: "0"}, Rates{}, ""},
		{"cached free", Price{Input: "1", Output: "2", CachedInput: "0"}, Rates{1_000_000, 2_000_000, 0}, ""},
		{"no input", Price{Output: "1"}, Rates{}, "input price"},
		{"no output", Price{Input: "1", CachedInput: "0.5"}, Rates{}, "output price"},
		{"bad cached", Price{Input: "1", Output: "1", CachedInput: "half"}, Rates{}, "cached_input"},
		{"negative", Price{Input: "-1", Output: "1"}, Rates{}, "negative"},
	} {
		got, err := tc.p.Rates()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %+v, %v; want an error with %q", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
	if !(Price{}).IsZero() || !(Price{Input: " "}).IsZero() || (Price{Output: "0"}).IsZero() {
		t.Error("IsZero")
	}
}

func TestCost(t *testing.T) {
	r := Rates{Input: 150_000, Output: 600_000, CachedInput: 75_000} // 0.15, 0.60, 0.075 per million
	for _, tc := range []struct {
		name    string
		r       Rates
		t       Tokens
		want    int64
		wantErr string
	}{
		{"nothing", r, Tokens{}, 0, ""},
		{"a million in", r, Tokens{Input: 1_000_000}, 150_000, ""},
		{"a million out", r, Tokens{Output: 1_000_000}, 600_000, ""},
		// 1000 tokens at 150_000 micro-units per million are 150
		// micro-units, 500 at 600_000 are 300.
		{"a small call", r, Tokens{Input: 1000, Output: 500}, 450, ""},
		// Cached tokens at their rate, not again as input: 600 × 0.15 + 400 × 0.075 = 90 + 30.
		{"cached", r, Tokens{Input: 1000, CachedInput: 400}, 120, ""},
		{"all cached", r, Tokens{Input: 1000, CachedInput: 1000}, 75, ""},
		// Rounded half up once per call: 3 × 150_000 / 1e6 = 0.45 → 0;
		// (3 × 150_000 + 1 × 75_000) / 1e6 = 0.525 → 1, where each part
		// rounded alone would give 0.
		{"below half", r, Tokens{Input: 3}, 0, ""},
		{"half", Rates{Input: 500_000}, Tokens{Input: 1}, 1, ""},
		{"just below half", Rates{Input: 499_999}, Tokens{Input: 1}, 0, ""},
		{"once per call", r, Tokens{Input: 4, CachedInput: 1}, 1, ""},
		{"huge, exact", Rates{Input: math.MaxInt64}, Tokens{Input: 1_000_000}, math.MaxInt64, ""},
		{"beyond int64", Rates{Input: math.MaxInt64}, Tokens{Input: 1_000_001}, 0, "beyond"},
		{"beyond 64 bits", Rates{Input: math.MaxInt64, Output: math.MaxInt64}, Tokens{Input: math.MaxInt64, Output: math.MaxInt64}, 0, "beyond"},
		{"more cached than input", r, Tokens{Input: 1, CachedInput: 2}, 0, "cached"},
		{"negative", r, Tokens{Output: -1}, 0, "negative"},
		{"negative rate", Rates{Input: -1}, Tokens{Input: 1}, 0, "negative"},
	} {
		got, err := tc.r.Cost(tc.t)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %d, %v; want an error with %q", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %d, %v; want %d", tc.name, got, err, tc.want)
		}
		if want := bigCost(tc.r, tc.t); want.Cmp(big.NewInt(got)) != 0 {
			t.Errorf("%s: %d, math/big says %v", tc.name, got, want)
		}
	}
}

// bigCost is Cost in math/big.
func bigCost(r Rates, t Tokens) *big.Int {
	n := new(big.Int).Mul(big.NewInt(t.Input-t.CachedInput), big.NewInt(r.Input))
	n.Add(n, new(big.Int).Mul(big.NewInt(t.CachedInput), big.NewInt(r.CachedInput)))
	n.Add(n, new(big.Int).Mul(big.NewInt(t.Output), big.NewInt(r.Output)))
	n.Add(n, big.NewInt(Micro/2))
	return n.Quo(n, big.NewInt(Micro))
}

var decimal = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// FuzzParse: Parse never panics; what it accepts is exactly the decimal's
// value in micro-units (math/big says), non-negative, and Format writes
// it back as a string Parse reads as the same value; what it refuses is
// not a decimal, or not a whole number of micro-units, or too large.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "0.15", "3", "1.234567", "0.0000001", "0.1500000", "-1", "", ".5", "5.", "1e3",
		"9223372036854.775807", "9223372036854.775808", "00000000000000000000001.1", " 7 "} {
		f.Add(s)
	}
	million := big.NewRat(Micro, 1)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		trimmed := strings.TrimSpace(s)
		var want *big.Int
		if decimal.MatchString(trimmed) {
			r, ok := new(big.Rat).SetString(trimmed)
			if !ok {
				t.Fatalf("big.Rat cannot read %q", trimmed)
			}
			r.Mul(r, million)
			if r.IsInt() && r.Num().IsInt64() {
				want = r.Num()
			}
		}
		if err != nil {
			if want != nil {
				t.Fatalf("Parse(%q): %v; it is %v micro-units", s, err, want)
			}
			return
		}
		if want == nil || want.Int64() != v || v < 0 {
			t.Fatalf("Parse(%q) = %d, want %v", s, v, want)
		}
		back, err := Parse(Format(v))
		if err != nil || back != v {
			t.Fatalf("Parse(Format(%d)) = %q → %d, %v", v, Format(v), back, err)
		}
		if Format(back) != Format(v) {
			t.Fatalf("Format is not stable for %d", v)
		}
	})
}

// FuzzCost: Cost is math/big's, or an error exactly when that is beyond
// int64.
func FuzzCost(f *testing.F) {
	f.Add(int64(150_000), int64(600_000), int64(75_000), int64(1000), int64(500), int64(400))
	f.Add(int64(math.MaxInt64), int64(math.MaxInt64), int64(0), int64(math.MaxInt64), int64(math.MaxInt64), int64(1))
	f.Fuzz(func(t *testing.T, ri, ro, rc, ti, to, tc int64) {
		r, tok := Rates{ri, ro, rc}, Tokens{ti, to, tc}
		got, err := r.Cost(tok)
		if ri < 0 || ro < 0 || rc < 0 || ti < 0 || to < 0 || tc < 0 || tc > ti {
			if err == nil {
				t.Fatalf("%+v %+v: %d, want an error", r, tok, got)
			}
			return
		}
		want := bigCost(r, tok)
		if !want.IsInt64() {
			if err == nil {
				t.Fatalf("%+v %+v: %d, want an error (%v)", r, tok, got, want)
			}
			return
		}
		if err != nil || got != want.Int64() {
			t.Fatalf("%+v %+v: %d %v, want %v", r, tok, got, err, want)
		}
	})
}
