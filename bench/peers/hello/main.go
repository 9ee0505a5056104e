// Command hello is the peer benchmark's floor: a Go hello-world, started
// and measured like every CLI (bench/peers).
package main

import "fmt"

func main() { fmt.Println("hello, world") }
