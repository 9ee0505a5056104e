// Command shop prints the total of a sample cart.
package main

import (
	"fmt"

	"example.com/shop/cart"
)

func main() {
	c := cart.New()
	c.Add("tea", 450, 2)
	c.Add("cups", 1200, 1)
	fmt.Println(c.Total("SAVE10"))
}
