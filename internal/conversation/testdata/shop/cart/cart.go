// Package cart holds a shopping cart.
package cart

import "example.com/shop/pricing"

// Item is one line of the cart.
type Item struct {
	Name     string
	Cents    int
	Quantity int
}

// Cart is a list of items.
type Cart struct{ items []Item }

// New returns an empty cart.
func New() *Cart { return &Cart{} }

// Add puts an item in the cart.
func (c *Cart) Add(name string, cents, qty int) {
	c.items = append(c.items, Item{name, cents, qty})
}

// Total is what the customer pays: the items, less the discount the code
// gives, plus tax.
func (c *Cart) Total(code string) int {
	sum := 0
	for _, it := range c.items {
		sum += it.Cents * it.Quantity
	}
	sum = pricing.ApplyDiscount(sum, code)
	return pricing.AddTax(sum)
}
