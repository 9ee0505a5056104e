package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
)

// Puller is a provider that can download a model onto its server: Ollama's
// (/api/pull). OpenAI-compatible servers cannot.
type Puller interface {
	Pull(ctx context.Context, model string, progress func(ollama.PullProgress)) error
}

var _ Puller = (*ollama.Provider)(nil)

// CanPull returns p as a Puller, if it is one.
func CanPull(p llm.Provider) (Puller, bool) {
	pl, ok := p.(Puller)
	return pl, ok
}

// Pull downloads model with pl, telling show (when not nil) of each step,
// and returns the check line that says how it went: the size and the time
// taken, or why it failed and what to do.
func Pull(ctx context.Context, pl Puller, model string, show func(ollama.PullProgress)) Check {
	start := time.Now()
	sizes := map[string]int64{}
	err := pl.Pull(ctx, model, func(p ollama.PullProgress) {
		if p.Digest != "" {
			sizes[p.Digest] = p.Total
		}
		if show != nil {
			show(p)
		}
	})
	if err != nil {
		c := fromError("pull", err)
		c.Detail = fmt.Sprintf("pulling %s failed: %s", model, c.Detail)
		if c.Fix == "" {
			c.Fix = fmt.Sprintf("run `ollama pull %s` to see Ollama's own report", model)
		}
		return c
	}
	var size int64
	for _, n := range sizes {
		size += n
	}
	return Check{Name: "pull", Status: OK,
		Detail: fmt.Sprintf("%s pulled from Ollama's registry (%s in %s)", model, Bytes(size), time.Since(start).Round(time.Second))}
}

// Meter shows a pull's progress on W. On a terminal (TTY) it redraws one
// line: a bar over the layers seen so far, the bytes and the speed.
// Anywhere else it writes plain lines and never floods a log: one per step
// and per layer as it starts, and while a layer downloads at most one every
// Every. Call Close when the pull is over.
type Meter struct {
	W     io.Writer
	Model string
	// TTY redraws one line in place; Color paints the bar (NO_COLOR unset).
	TTY, Color bool
	// Every spaces plain progress lines; 0 means 5 s.
	Every time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	layers    map[string]*layerProgress
	order     []string
	status    string
	drawn     bool
	lastDraw  time.Time
	lastLine  time.Time
	sampleAt  time.Time
	sampleGot int64
	speed     float64 // bytes a second, 0 until measured
}

type layerProgress struct{ total, completed int64 }

// Redraws on a terminal are at most this often (a pull reports many times
// a second).
const redrawEvery = 100 * time.Millisecond

func (m *Meter) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Show takes one step of the pull.
func (m *Meter) Show(p ollama.PullProgress) {
	now := m.now()
	status := termtext.String(p.Status)
	changed := status != m.status
	m.status = status
	if m.layers == nil {
		m.layers = map[string]*layerProgress{}
	}
	started := false
	if p.Digest != "" {
		l, ok := m.layers[p.Digest]
		if !ok {
			l = &layerProgress{}
			m.layers[p.Digest] = l
			m.order = append(m.order, p.Digest)
			started = true
		}
		l.total, l.completed = p.Total, p.Completed
		if l.total > 0 {
			l.completed = min(l.completed, l.total)
		}
		m.measure(now)
	}
	if m.TTY {
		done, total := m.sum()
		if !changed && !started && done < total && now.Sub(m.lastDraw) < redrawEvery {
			return
		}
		m.lastDraw = now
		m.drawn = true
		fmt.Fprint(m.W, "\r\033[K"+m.line(p.Digest != ""))
		return
	}
	every := m.Every
	if every <= 0 {
		every = 5 * time.Second
	}
	switch {
	case p.Digest == "" && changed:
		fmt.Fprintf(m.W, "%s: %s\n", m.name(), status)
	case started:
		m.lastLine = now
		fmt.Fprintf(m.W, "%s: %s (%s)\n", m.name(), status, Bytes(p.Total))
	case p.Digest != "" && now.Sub(m.lastLine) >= every:
		m.lastLine = now
		fmt.Fprintf(m.W, "%s: %s: %s of %s (%d%%)\n", m.name(), status, Bytes(p.Completed), Bytes(p.Total), percent(p.Completed, p.Total))
	}
}

// Close ends the meter: on a terminal it clears the bar's line.
func (m *Meter) Close() {
	if m.TTY && m.drawn {
		fmt.Fprint(m.W, "\r\033[K")
		m.drawn = false
	}
}

// name is the model as shown: without control sequences, and short enough
// to keep the bar on one line.
func (m *Meter) name() string {
	s := termtext.String(m.Model)
	if r := []rune(s); len(r) > 32 {
		s = string(r[:31]) + "…"
	}
	return s
}

func (m *Meter) sum() (done, total int64) {
	for _, d := range m.order {
		l := m.layers[d]
		done += l.completed
		total += l.total
	}
	return done, total
}

// measure updates the speed over windows of at least two seconds.
func (m *Meter) measure(now time.Time) {
	done, _ := m.sum()
	switch d := now.Sub(m.sampleAt); {
	case m.sampleAt.IsZero():
		m.sampleAt, m.sampleGot = now, done
	case d >= 2*time.Second:
		m.speed = float64(done-m.sampleGot) / d.Seconds()
		m.sampleAt, m.sampleGot = now, done
	}
}

// line is the terminal's one line: the bar once a layer is known, and the
// step when it is not a layer's download.
func (m *Meter) line(downloading bool) string {
	done, total := m.sum()
	if total == 0 {
		return m.name() + ": " + m.status
	}
	s := fmt.Sprintf("%s %s %3d%%  %s/%s", m.name(), m.bar(done, total), percent(done, total), Bytes(done), Bytes(total))
	switch {
	case !downloading:
		s += "  " + m.status
	case m.speed > 0 && done < total:
		s += "  " + Bytes(int64(m.speed)) + "/s"
	}
	return s
}

const barWidth = 24

// bar draws done of total in barWidth cells, to an eighth of a cell.
func (m *Meter) bar(done, total int64) string {
	eighths := int(float64(barWidth*8) * float64(done) / float64(total))
	eighths = max(0, min(eighths, barWidth*8))
	full, part := eighths/8, eighths%8
	fill := strings.Repeat("█", full)
	if part > 0 {
		fill += string([]rune(" ▏▎▍▌▋▊▉")[part])
		full++
	}
	if m.Color && fill != "" {
		fill = "\033[32m" + fill + "\033[0m"
	}
	return "▕" + fill + strings.Repeat(" ", barWidth-full) + "▏"
}

func percent(done, total int64) int {
	if total <= 0 {
		return 0
	}
	return int(done * 100 / total)
}

// Bytes writes a size as Ollama does, in decimal units: 2.5 GB, 386 MB.
func Bytes(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	f := float64(n)
	i := 0
	for f >= 1000 && i < len(units)-1 {
		f /= 1000
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%d B", n)
	case f < 10:
		return fmt.Sprintf("%.1f %s", f, units[i])
	}
	return fmt.Sprintf("%.0f %s", f, units[i])
}
