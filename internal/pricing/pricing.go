// Package pricing turns the prices of models, as the user writes them in
// config, into what a model call cost: an integer of micro-units
// (millionths) of the user's currency, computed without floating point, so
// that sums of many calls are exact. It knows no prices itself: a model
// without a price has no cost (unknown, never 0).
package pricing

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Micro is how many micro-units make a unit of the currency.
const Micro = 1_000_000

// Places is how many digits after the point a price may have: a
// micro-unit per million tokens is the smallest price there is. Digits
// beyond it are accepted only when they are zeros ("0.1500000"): a price
// is never rounded.
const Places = 6

// Price is what a model costs per million tokens, in the user's currency,
// as decimal strings ("0.15"; a number from config is formatted with
// strconv.FormatFloat(f, 'f', -1, 64), which gives the digits the user
// wrote). CachedInput prices the input tokens that the provider serves
// from its prompt cache; "" prices them as Input.
type Price struct {
	Input       string `json:"input" toml:"input"`
	Output      string `json:"output" toml:"output"`
	CachedInput string `json:"cached_input,omitempty" toml:"cached_input"`
}

// Rates is a Price read: micro-units per million tokens.
type Rates struct {
	Input, Output, CachedInput int64
}

// Tokens are the token counts of one model call. CachedInput are the input
// tokens served from the provider's cache: a part of Input (as
// session.Usage counts them), priced at the cached rate, not again as
// input.
type Tokens struct {
	Input, Output, CachedInput int64
}

// Parse reads a non-negative decimal amount ("3", "0.15", "12.500000"; no
// sign, exponent or separators; spaces around it are ignored) and returns
// it in micro-units: at most Places digits after the point that are not
// zeros, and at most what an int64 of micro-units holds.
func Parse(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("no amount")
	}
	if t[0] == '-' {
		return 0, fmt.Errorf("%q: a price cannot be negative", s)
	}
	whole, frac, dot := strings.Cut(t, ".")
	if whole == "" || dot && frac == "" || !digits(whole) || !digits(frac) {
		return 0, fmt.Errorf("%q is not a decimal number (such as 3 or 0.15)", s)
	}
	if len(frac) > Places {
		if strings.Trim(frac[Places:], "0") != "" {
			return 0, fmt.Errorf("%q has more than %d digits after the point: the smallest price is 0.000001", s, Places)
		}
		frac = frac[:Places]
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 19 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	var w uint64
	for _, c := range []byte(whole) {
		w = w*10 + uint64(c-'0') // at most 19 digits: no overflow of uint64
	}
	if w > math.MaxInt64/Micro {
		return 0, fmt.Errorf("%q is too large", s)
	}
	var f int64
	for i := range Places {
		f *= 10
		if i < len(frac) {
			f += int64(frac[i] - '0')
		}
	}
	v := int64(w)*Micro + f
	if v < 0 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return v, nil
}

// digits says whether s is ASCII digits only ("" is).
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Format writes micro-units as a decimal amount, without trailing zeros
// after the point ("0.15", "3", "0.000001"; "-" before a negative one):
// what Parse reads back as the same micro-units.
func Format(micro int64) string {
	sign := ""
	u := uint64(micro)
	if micro < 0 {
		sign, u = "-", -u // -u: also right for math.MinInt64
	}
	whole := strconv.FormatUint(u/Micro, 10)
	frac := strings.TrimRight(fmt.Sprintf("%06d", u%Micro), "0")
	if frac == "" {
		return sign + whole
	}
	return sign + whole + "." + frac
}

// IsZero reports whether p sets no price at all: the model has none (its
// calls' cost is unknown).
func (p Price) IsZero() bool {
	return strings.TrimSpace(p.Input) == "" && strings.TrimSpace(p.Output) == "" && strings.TrimSpace(p.CachedInput) == ""
}

// Rates checks a price and reads it: Input and Output are required (a
// price of half a model would show a wrong cost as a known one),
// CachedInput is Input when not set.
func (p Price) Rates() (Rates, error) {
	var r Rates
	for _, f := range []struct {
		name     string
		s        string
		v        *int64
		optional bool
	}{
		{"input", p.Input, &r.Input, false},
		{"output", p.Output, &r.Output, false},
		{"cached_input", p.CachedInput, &r.CachedInput, true},
	} {
		if strings.TrimSpace(f.s) == "" {
			if !f.optional {
				return Rates{}, fmt.Errorf("price: the %s price (per million tokens) is missing", f.name)
			}
			continue
		}
		v, err := Parse(f.s)
		if err != nil {
			return Rates{}, fmt.Errorf("price: %s: %w", f.name, err)
		}
		*f.v = v
	}
	if strings.TrimSpace(p.CachedInput) == "" {
		r.CachedInput = r.Input
	}
	return r, nil
}

// Cost returns what a call of t tokens costs at r, in micro-units:
// (input − cached) × Input + cached × CachedInput + output × Output, over
// a million, rounded half up once for the whole call. It is computed in
// 128-bit integers; a cost beyond int64, negative counts or more cached
// tokens than input tokens are errors.
func (r Rates) Cost(t Tokens) (int64, error) {
	if t.Input < 0 || t.Output < 0 || t.CachedInput < 0 {
		return 0, fmt.Errorf("cost: negative token counts (%+v)", t)
	}
	if t.CachedInput > t.Input {
		return 0, fmt.Errorf("cost: %d cached input tokens of %d input tokens", t.CachedInput, t.Input)
	}
	if r.Input < 0 || r.Output < 0 || r.CachedInput < 0 {
		return 0, fmt.Errorf("cost: negative rates (%+v)", r)
	}
	var n u128
	for _, term := range [][2]int64{{t.Input - t.CachedInput, r.Input}, {t.CachedInput, r.CachedInput}, {t.Output, r.Output}} {
		hi, lo := bits.Mul64(uint64(term[0]), uint64(term[1]))
		n = n.add(u128{hi, lo}) // each term < 2^126: the sum of three fits
	}
	n = n.add(u128{0, Micro / 2})
	if n.hi >= Micro {
		return 0, errTooLarge
	}
	q, _ := bits.Div64(n.hi, n.lo, Micro)
	if q > math.MaxInt64 {
		return 0, errTooLarge
	}
	return int64(q), nil
}

var errTooLarge = errors.New("cost: beyond what an int64 of micro-units holds")

// u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	hi, _ := bits.Add64(x.hi, y.hi, c)
	return u128{hi, lo}
}
