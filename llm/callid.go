package llm

import "crypto/rand"

const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewCallID returns a fresh tool-call id ("call_" and eight random
// characters), for calls whose server sent none.
func NewCallID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	out := []byte("call_xxxxxxxx")
	for i, c := range b {
		out[5+i] = idAlphabet[int(c)%len(idAlphabet)]
	}
	return string(out)
}
