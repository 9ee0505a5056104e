// Package termshot renders a terminal screen, as `tmux capture-pane -e -p`
// prints it (text with SGR colour and attribute sequences), to an image, so
// that documentation can show the terminal UI without running it.
//
// Glyphs come from the Go Mono fonts; box drawing, block elements, braille
// spinners and a few symbols the fonts lack (✓ ✗ ✻ ⚠ ▸ ▾) are drawn as
// shapes.
package termshot

import (
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Options say how the screen is drawn.
type Options struct {
	// Size is the font size in pixels (default 16).
	Size float64
	// Foreground and Background are the terminal's default colours
	// (default: light grey on a dark blue-grey).
	Foreground, Background color.Color
	// Margin is the padding around the screen in pixels (default 16).
	Margin int
}

type cell struct {
	r                                  rune
	fg, bg                             color.Color
	bold, faint, italic, under, invert bool
}

// Render draws screen (cols×rows cells; longer lines are cut) to an image.
func Render(screen string, cols, rows int, o Options) (image.Image, error) {
	if o.Size == 0 {
		o.Size = 16
	}
	if o.Foreground == nil {
		o.Foreground = color.RGBA{0xd8, 0xdb, 0xe2, 0xff}
	}
	if o.Background == nil {
		o.Background = color.RGBA{0x1b, 0x1e, 0x28, 0xff}
	}
	if o.Margin == 0 {
		o.Margin = 16
	}
	faces, err := loadFaces(o.Size)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range faces {
			f.Close()
		}
	}()
	m := faces[0].Metrics()
	adv, _ := faces[0].GlyphAdvance('M')
	cw := adv.Ceil()
	ch := (m.Ascent + m.Descent).Ceil() + 2
	asc := m.Ascent.Ceil() + 1

	grid := parse(screen, cols, rows)
	img := image.NewRGBA(image.Rect(0, 0, cols*cw+2*o.Margin, rows*ch+2*o.Margin))
	draw.Draw(img, img.Bounds(), &image.Uniform{o.Background}, image.Point{}, draw.Src)
	for y, line := range grid {
		for x, c := range line {
			fg, bg := c.fg, c.bg
			if fg == nil {
				fg = o.Foreground
			}
			if bg == nil {
				bg = o.Background
			}
			if c.invert {
				fg, bg = bg, fg
			}
			if c.faint {
				fg = mix(fg, bg, 0.45)
			}
			px, py := o.Margin+x*cw, o.Margin+y*ch
			r := image.Rect(px, py, px+cw, py+ch)
			if bg != o.Background {
				draw.Draw(img, r, &image.Uniform{bg}, image.Point{}, draw.Src)
			}
			if c.r == 0 || c.r == ' ' {
				continue
			}
			if c.under {
				draw.Draw(img, image.Rect(px, py+asc+2, px+cw, py+asc+3), &image.Uniform{fg}, image.Point{}, draw.Src)
			}
			if shape(img, c.r, r, fg) {
				continue
			}
			face := faces[0]
			switch {
			case c.bold && c.italic:
				face = faces[3]
			case c.bold:
				face = faces[1]
			case c.italic:
				face = faces[2]
			}
			if _, ok := face.GlyphAdvance(c.r); !ok {
				c.r = '?'
			}
			d := font.Drawer{Dst: img, Src: &image.Uniform{fg}, Face: face, Dot: fixed.P(px, py+asc)}
			d.DrawString(string(c.r))
		}
	}
	return img, nil
}

// WritePNG renders screen and writes it as a PNG.
func WritePNG(w io.Writer, screen string, cols, rows int, o Options) error {
	img, err := Render(screen, cols, rows, o)
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}

func loadFaces(size float64) ([]font.Face, error) {
	var faces []font.Face
	for _, ttf := range [][]byte{gomono.TTF, gomonobold.TTF, gomonoitalic.TTF, gomonobolditalic.TTF} {
		f, err := opentype.Parse(ttf)
		if err != nil {
			return nil, err
		}
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return nil, err
		}
		faces = append(faces, face)
	}
	return faces, nil
}

// parse reads the text and its SGR sequences into a grid.
func parse(screen string, cols, rows int) [][]cell {
	grid := make([][]cell, rows)
	for i := range grid {
		grid[i] = make([]cell, cols)
	}
	var cur cell
	x, y := 0, 0
	for i := 0; i < len(screen) && y < rows; {
		c := screen[i]
		switch {
		case c == '\x1b' && i+1 < len(screen) && screen[i+1] == '[':
			j := i + 2
			for j < len(screen) && (screen[j] < 0x40 || screen[j] > 0x7e) {
				j++
			}
			if j < len(screen) && screen[j] == 'm' {
				sgr(&cur, screen[i+2:j])
			}
			i = j + 1
			continue
		case c == '\x1b':
			// Other escapes (OSC hyperlinks): skip to the terminator.
			j := i + 1
			for j < len(screen) && screen[j] != '\a' && !(screen[j] == '\\' && screen[j-1] == '\x1b') {
				j++
			}
			i = j + 1
			continue
		case c == '\n':
			x, y = 0, y+1
			i++
			continue
		case c == '\r':
			i++
			continue
		}
		r, size := decodeRune(screen[i:])
		i += size
		if x < cols {
			cc := cur
			cc.r = r
			grid[y][x] = cc
		}
		x++
		if isWide(r) {
			x++
		}
	}
	return grid
}

func decodeRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 1
}

func isWide(r rune) bool {
	return r >= 0x1100 && (r <= 0x115f || (r >= 0x2e80 && r <= 0xa4cf) || (r >= 0xac00 && r <= 0xd7a3) ||
		(r >= 0xf900 && r <= 0xfaff) || (r >= 0xfe30 && r <= 0xfe4f) || (r >= 0xff00 && r <= 0xff60) ||
		(r >= 0x1f300 && r <= 0x1faff))
}

// sgr applies one Select Graphic Rendition sequence.
func sgr(c *cell, params string) {
	ps := strings.FieldsFunc(params, func(r rune) bool { return r == ';' || r == ':' })
	if len(ps) == 0 {
		ps = []string{"0"}
	}
	n := func(i int) int {
		if i >= len(ps) {
			return 0
		}
		v, _ := strconv.Atoi(ps[i])
		return v
	}
	for i := 0; i < len(ps); i++ {
		switch p := n(i); {
		case p == 0:
			*c = cell{}
		case p == 1:
			c.bold = true
		case p == 2:
			c.faint = true
		case p == 3:
			c.italic = true
		case p == 4:
			c.under = true
		case p == 7:
			c.invert = true
		case p == 22:
			c.bold, c.faint = false, false
		case p == 23:
			c.italic = false
		case p == 24:
			c.under = false
		case p == 27:
			c.invert = false
		case p >= 30 && p <= 37:
			c.fg = ansi16[p-30]
		case p >= 90 && p <= 97:
			c.fg = ansi16[p-90+8]
		case p >= 40 && p <= 47:
			c.bg = ansi16[p-40]
		case p >= 100 && p <= 107:
			c.bg = ansi16[p-100+8]
		case p == 39:
			c.fg = nil
		case p == 49:
			c.bg = nil
		case p == 38 || p == 48:
			var col color.Color
			switch n(i + 1) {
			case 5:
				col = ansi256(n(i + 2))
				i += 2
			case 2:
				col = color.RGBA{uint8(n(i + 2)), uint8(n(i + 3)), uint8(n(i + 4)), 0xff}
				i += 4
			}
			if p == 38 {
				c.fg = col
			} else {
				c.bg = col
			}
		}
	}
}

var ansi16 = []color.Color{
	rgb(0x1b1e28), rgb(0xf7768e), rgb(0x9ece6a), rgb(0xe0af68), rgb(0x7aa2f7), rgb(0xbb9af7), rgb(0x7dcfff), rgb(0xc0caf5),
	rgb(0x565f89), rgb(0xff899d), rgb(0xafd67a), rgb(0xf0c080), rgb(0x8db0ff), rgb(0xc7a9ff), rgb(0xa4daff), rgb(0xffffff),
}

func rgb(v uint32) color.Color { return color.RGBA{uint8(v >> 16), uint8(v >> 8), uint8(v), 0xff} }

func ansi256(i int) color.Color {
	switch {
	case i < 16:
		return ansi16[max(i, 0)]
	case i < 232:
		i -= 16
		lv := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + v*40)
		}
		return color.RGBA{lv(i / 36), lv(i / 6 % 6), lv(i % 6), 0xff}
	}
	g := uint8(8 + (i-232)*10)
	return color.RGBA{g, g, g, 0xff}
}

func mix(a, b color.Color, t float64) color.Color {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	f := func(x, y uint32) uint8 { return uint8((float64(x)*(1-t) + float64(y)*t) / 257) }
	return color.RGBA{f(ar, br), f(ag, bg), f(ab, bb), 0xff}
}

// ---- shapes for what the font lacks ----

// boxArms says which arms (up, right, down, left) a box-drawing character
// has; heavy ones are drawn light.
var boxArms = map[rune][4]bool{
	'─': {false, true, false, true}, '━': {false, true, false, true},
	'│': {true, false, true, false}, '┃': {true, false, true, false},
	'┌': {false, true, true, false}, '╭': {false, true, true, false},
	'┐': {false, false, true, true}, '╮': {false, false, true, true},
	'└': {true, true, false, false}, '╰': {true, true, false, false},
	'┘': {true, false, false, true}, '╯': {true, false, false, true},
	'├': {true, true, true, false}, '┤': {true, false, true, true},
	'┬': {false, true, true, true}, '┴': {true, true, false, true},
	'┼': {true, true, true, true},
	'╴': {false, false, false, true}, '╶': {false, true, false, false},
}

// shape draws r into cell rectangle b if it is one of the drawn shapes.
func shape(img *image.RGBA, r rune, b image.Rectangle, c color.Color) bool {
	cx, cy := (b.Min.X+b.Max.X)/2, (b.Min.Y+b.Max.Y)/2
	fill := func(x0, y0, x1, y1 int) {
		draw.Draw(img, image.Rect(x0, y0, x1, y1), &image.Uniform{c}, image.Point{}, draw.Over)
	}
	if arms, ok := boxArms[r]; ok {
		rounded := r == '╭' || r == '╮' || r == '╰' || r == '╯'
		if rounded {
			rad := float64(b.Dx()) / 2
			// a quarter circle joining the two arms
			ox, oy := float64(cx), float64(cy)
			sx, sy := 1.0, 1.0
			if arms[3] {
				sx = -1
			}
			if arms[0] {
				sy = -1
			}
			ox += sx * rad
			oy += sy * rad
			for a := 0.0; a <= math.Pi/2; a += 0.02 {
				x := ox - sx*rad*math.Cos(a)
				y := oy - sy*rad*math.Sin(a)
				fill(int(x), int(y), int(x)+1, int(y)+1)
			}
			if arms[1] {
				fill(int(ox), cy, b.Max.X, cy+1)
			}
			if arms[3] {
				fill(b.Min.X, cy, int(ox)+1, cy+1)
			}
			if arms[0] {
				fill(cx, b.Min.Y, cx+1, int(oy)+1)
			}
			if arms[2] {
				fill(cx, int(oy), cx+1, b.Max.Y)
			}
			return true
		}
		if arms[0] {
			fill(cx, b.Min.Y, cx+1, cy+1)
		}
		if arms[2] {
			fill(cx, cy, cx+1, b.Max.Y)
		}
		if arms[3] {
			fill(b.Min.X, cy, cx+1, cy+1)
		}
		if arms[1] {
			fill(cx, cy, b.Max.X, cy+1)
		}
		return true
	}
	w, h := float64(b.Dx()), float64(b.Dy())
	x0, y0 := float64(b.Min.X), float64(b.Min.Y)
	line := func(ax, ay, bx, by float64, thick float64) {
		steps := int(math.Max(math.Abs(bx-ax), math.Abs(by-ay))*w) + 1
		for i := 0; i <= steps; i++ {
			t := float64(i) / float64(steps)
			x := x0 + (ax+(bx-ax)*t)*w
			y := y0 + (ay+(by-ay)*t)*h
			fill(int(x-thick/2), int(y-thick/2), int(x+thick/2)+1, int(y+thick/2)+1)
		}
	}
	switch {
	case r >= 0x2800 && r <= 0x28ff: // braille
		bits := r - 0x2800
		pos := [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}}
		dot := max(b.Dx()/5, 2)
		for i, p := range pos {
			if bits&(1<<i) == 0 {
				continue
			}
			x := b.Min.X + b.Dx()/4 + p[0]*b.Dx()/2 - dot/2
			y := b.Min.Y + b.Dy()/8 + p[1]*b.Dy()/4 + dot/2
			fill(x, y, x+dot, y+dot)
		}
		return true
	case r == '✓' || r == '✔':
		line(0.15, 0.55, 0.4, 0.75, 2)
		line(0.4, 0.75, 0.9, 0.3, 2)
		return true
	case r == '✗' || r == '✘':
		line(0.2, 0.3, 0.8, 0.8, 2)
		line(0.8, 0.3, 0.2, 0.8, 2)
		return true
	case r == '✻' || r == '✦' || r == '✳':
		line(0.5, 0.25, 0.5, 0.85, 1.5)
		line(0.2, 0.4, 0.8, 0.7, 1.5)
		line(0.8, 0.4, 0.2, 0.7, 1.5)
		return true
	case r == '⚠':
		line(0.5, 0.25, 0.1, 0.85, 1.5)
		line(0.5, 0.25, 0.9, 0.85, 1.5)
		line(0.1, 0.85, 0.9, 0.85, 1.5)
		line(0.5, 0.45, 0.5, 0.68, 1.5)
		line(0.5, 0.76, 0.5, 0.78, 1.5)
		return true
	case r == '⊘': // a circle struck through (a step skipped)
		const segs = 24
		for i := 0; i < segs; i++ {
			a, b := 2*math.Pi*float64(i)/segs, 2*math.Pi*float64(i+1)/segs
			line(0.5+0.35*math.Cos(a), 0.55+0.25*math.Sin(a), 0.5+0.35*math.Cos(b), 0.55+0.25*math.Sin(b), 1.2)
		}
		line(0.25, 0.75, 0.75, 0.35, 1.2)
		return true
	case r == '▸' || r == '▶':
		for y := 0.35; y <= 0.75; y += 0.02 {
			line(0.3, y, 0.3+0.5*(0.2-math.Abs(y-0.55))/0.2, y, 1)
		}
		return true
	case r == '▾' || r == '▼':
		for x := 0.2; x <= 0.8; x += 0.02 {
			line(x, 0.4, x, 0.4+0.35*(0.3-math.Abs(x-0.5))/0.3, 1)
		}
		return true
	case r == '█':
		fill(b.Min.X, b.Min.Y, b.Max.X, b.Max.Y)
		return true
	case r == '▌':
		fill(b.Min.X, b.Min.Y, cx, b.Max.Y)
		return true
	case r == '▎' || r == '▏':
		fill(b.Min.X, b.Min.Y, b.Min.X+max(b.Dx()/4, 1), b.Max.Y)
		return true
	}
	return false
}
