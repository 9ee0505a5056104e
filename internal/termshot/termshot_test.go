package termshot

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"
)

func TestRender(t *testing.T) {
	screen := "\x1b[48;2;255;0;0m  \x1b[0m ok\n╭─╮ ⠋ ✓\n"
	img, err := Render(screen, 10, 3, Options{Size: 16, Margin: 4})
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() <= 10*8 || b.Dy() <= 3*16 {
		t.Fatalf("size %v", b)
	}
	// The first cell's background is red.
	r, g, _, _ := img.At(6, 8).RGBA()
	if r>>8 != 255 || g>>8 != 0 {
		t.Errorf("first cell colour %v", img.At(6, 8))
	}
	var buf bytes.Buffer
	if err := WritePNG(&buf, screen, 10, 3, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&buf); err != nil {
		t.Errorf("not a PNG: %v", err)
	}
}

func TestSGR(t *testing.T) {
	cases := []struct {
		params string
		check  func(c cell) bool
	}{
		{"1;3;4", func(c cell) bool { return c.bold && c.italic && c.under }},
		{"31", func(c cell) bool { return c.fg == ansi16[1] }},
		{"38;5;196", func(c cell) bool { return c.fg == color.Color(color.RGBA{255, 0, 0, 255}) }},
		{"38;2;1;2;3", func(c cell) bool { return c.fg == color.Color(color.RGBA{1, 2, 3, 255}) }},
		{"48;5;240", func(c cell) bool { return c.bg != nil }},
		{"7", func(c cell) bool { return c.invert }},
		{"", func(c cell) bool { return c == cell{} }},
	}
	for _, tc := range cases {
		c := cell{bold: true}
		if tc.params != "1;3;4" {
			c = cell{}
		}
		sgr(&c, tc.params)
		if !tc.check(c) {
			t.Errorf("sgr(%q) = %+v", tc.params, c)
		}
	}
}
