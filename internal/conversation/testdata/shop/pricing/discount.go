// Package pricing computes discounts and tax.
package pricing

import "strings"

// codes maps discount codes to a percentage off.
var codes = map[string]int{
	"SAVE10": 10,
	"HALF":   50,
}

// ApplyDiscount takes the code's percentage off cents; an unknown code
// changes nothing.
func ApplyDiscount(cents int, code string) int {
	pct, ok := codes[strings.ToUpper(code)]
	if !ok {
		return cents
	}
	return cents - cents*pct/100
}
