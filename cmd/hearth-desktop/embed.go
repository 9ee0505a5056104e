package main

import "embed"

// packaging holds the .desktop file and the icon (installed by
// scripts/desktop.sh --install; the icon is the window's too).
//
//go:embed packaging
var packaging embed.FS
