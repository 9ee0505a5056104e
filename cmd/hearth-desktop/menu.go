package main

import (
	"fmt"
	"runtime"

	"github.com/wailsapp/wails/v2/pkg/menu"
	"github.com/wailsapp/wails/v2/pkg/menu/keys"
	wr "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/hearth-agent/hearth/internal/buildinfo"
)

// menu is the window's menu bar, with the shortcuts desktop users expect:
// Ctrl+N (⌘N) a new session, Ctrl+O open a folder, Ctrl+, settings,
// Ctrl+Q quit, Ctrl+= / Ctrl+- / Ctrl+0 zoom, F11 full screen.
func (a *app) menu() *menu.Menu {
	m := menu.NewMenu()
	if runtime.GOOS == "darwin" {
		m.Append(menu.AppMenu())
	}
	file := m.AddSubmenu("File")
	file.AddText("New Session", keys.CmdOrCtrl("n"), func(*menu.CallbackData) { a.emit(eventNewSession) })
	file.AddText("Open Folder…", keys.CmdOrCtrl("o"), func(*menu.CallbackData) {
		if _, err := a.chooseWorkspace(); err != nil {
			a.warn(err.Error())
		}
	})
	file.AddSeparator()
	file.AddText("Settings…", keys.CmdOrCtrl(","), func(*menu.CallbackData) { a.emit(eventSettings) })
	file.AddSeparator()
	file.AddText("Quit", keys.CmdOrCtrl("q"), func(*menu.CallbackData) { a.quit() })
	if runtime.GOOS == "darwin" {
		m.Append(menu.EditMenu())
	}
	view := m.AddSubmenu("View")
	view.AddText("Zoom In", keys.CmdOrCtrl("="), func(*menu.CallbackData) { a.zoom(1) })
	view.AddText("Zoom Out", keys.CmdOrCtrl("-"), func(*menu.CallbackData) { a.zoom(-1) })
	view.AddText("Actual Size", keys.CmdOrCtrl("0"), func(*menu.CallbackData) { a.zoom(0) })
	view.AddSeparator()
	view.AddText("Full Screen", keys.Key("f11"), func(*menu.CallbackData) {
		if ctx := a.wctx(); ctx != nil {
			if wr.WindowIsFullscreen(ctx) {
				wr.WindowUnfullscreen(ctx)
			} else {
				wr.WindowFullscreen(ctx)
			}
		}
	})
	help := m.AddSubmenu("Help")
	help.AddText("Documentation", nil, func(*menu.CallbackData) {
		if ctx := a.wctx(); ctx != nil {
			wr.BrowserOpenURL(ctx, "https://github.com/hearth-agent/hearth#readme")
		}
	})
	help.AddText("About Hearth", nil, func(*menu.CallbackData) {
		if ctx := a.wctx(); ctx != nil {
			wr.MessageDialog(ctx, wr.MessageDialogOptions{Type: wr.InfoDialog, Title: "About Hearth",
				Message: versionString() + "\nA local-first AI agent: models on your own machine, in your own projects."})
		}
	})
	return m
}

// versionString is the app's name and version.
func versionString() string { return fmt.Sprintf("Hearth desktop %s", buildinfo.Version) }

// emit sends the page an event.
func (a *app) emit(name string) {
	if ctx := a.wctx(); ctx != nil {
		wr.EventsEmit(ctx, name)
	}
}

// warn shows a problem in a dialog.
func (a *app) warn(msg string) {
	if ctx := a.wctx(); ctx != nil {
		wr.MessageDialog(ctx, wr.MessageDialogOptions{Type: wr.WarningDialog, Title: "Hearth", Message: msg})
	}
}
