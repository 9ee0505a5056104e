//go:build hearthprobe

package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	wr "github.com/wailsapp/wails/v2/pkg/runtime"
)

// The probe lets the end-to-end test read what the window shows. It is
// built in only with the tag hearthprobe (the test's build). With
// HEARTH_DESKTOP_PROBE=FILE the app asks the page, several times a second,
// for its visible text, the theme, the zoom, whether it has the focus, and
// where its controls are; and writes the answer to FILE (replaced whole).
// What is read is the page as the web view renders it, not what the
// server sent. Without the variable there is no probe.
const probeJS = `(() => {
  if (!window.__hearthProbe) {
    window.__hearthProbe = { mouse: null }
    addEventListener('mousemove', (e) => { window.__hearthProbe.mouse = { x: e.clientX, y: e.clientY } }, true)
  }
  const els = []
  for (const el of document.querySelectorAll('button, textarea, input, select, [role=button], [data-testid], [aria-label]')) {
    const r = el.getBoundingClientRect()
    if (r.width === 0 && r.height === 0) continue
    els.push({ tag: el.tagName.toLowerCase(), label: (el.getAttribute('aria-label') || el.innerText || el.value || '').trim().slice(0, 200),
      id: el.id || '', value: typeof el.value === 'string' && el.type !== 'password' ? el.value.slice(0, 200) : '', testid: el.dataset.testid || '', state: el.dataset.state || '', x: r.x, y: r.y, w: r.width, h: r.height, disabled: !!el.disabled,
      focused: document.activeElement === el })
  }
  window.runtime.EventsEmit('hearth:probe', JSON.stringify({ text: document.body.innerText, title: document.title,
    theme: document.documentElement.dataset.theme || '', zoom: document.documentElement.style.zoom || '1',
    focus: document.hasFocus(), path: location.pathname, width: innerWidth, height: innerHeight,
    mouse: window.__hearthProbe.mouse, elements: els }))
})()`

// startProbe starts writing the page's state to a.probeAt.
func (a *app) startProbe(ctx context.Context) {
	wr.EventsOn(ctx, "hearth:probe", func(data ...any) {
		if len(data) == 0 {
			return
		}
		s, _ := data[0].(string)
		tmp := a.probeAt + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err == nil {
			os.Rename(tmp, a.probeAt)
		}
	})
	os.MkdirAll(filepath.Dir(a.probeAt), 0o700)
	go func() {
		t := time.NewTicker(150 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-a.quitDone:
				return
			case <-t.C:
				wr.WindowExecJS(ctx, probeJS)
			}
		}
	}()
}
