#!/usr/bin/env bash
# desktop.sh - build and test Hearth's desktop app (cmd/hearth-desktop).
#
#   scripts/desktop.sh            install what it needs (Debian: WebKitGTK
#                                 4.1 and GTK 3 development files, Xvfb,
#                                 xdotool, ImageMagick, dbus), then vet,
#                                 gofmt, unit tests, build, and the
#                                 end-to-end test of the real app in Xvfb
#   scripts/desktop.sh --deps     only install what it needs
#   scripts/desktop.sh --build    install, then build ./hearth-desktop
#   scripts/desktop.sh --install  build, then install it for this user:
#                                 ~/.local/bin/hearth-desktop, its .desktop
#                                 file and icon (the app menu finds it)
#
# The app is a separate Go module (cmd/hearth-desktop/go.mod) built with
# cgo and the tags Wails needs (desktop,production) and webkit2_41
# (WebKitGTK 4.1); the main hearth binary stays pure Go. With
# HEARTH_SCREENSHOTS=DIR the end-to-end test writes the docs' screenshots
# (desktop-light.png, desktop-dark.png) there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
TAGS=desktop,production,webkit2_41
log() { printf '\n== %s\n' "$*"; }

deps() {
  local pkgs=(libwebkit2gtk-4.1-dev libgtk-3-dev pkg-config gcc xvfb xdotool imagemagick dbus xauth)
  local missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null; then
    echo "desktop.sh: install these (or your system's equivalents) first: ${missing[*]}" >&2
    exit 1
  fi
  if [ "$(id -u)" = 0 ]; then sudo=; elif command -v sudo >/dev/null; then sudo="sudo -n"; else
    echo "desktop.sh: as root, run: apt-get install ${missing[*]}" >&2; exit 1
  fi
  log "installing ${missing[*]} (apt-get)"
  local install="env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends ${missing[*]}"
  $sudo $install >/dev/null || { $sudo apt-get update -q >/dev/null && $sudo $install >/dev/null; } || {
    echo "desktop.sh: could not install ${missing[*]} with apt-get" >&2
    exit 1
  }
}

build() {
  log "building cmd/hearth-desktop (cgo, -tags $TAGS)"
  (cd cmd/hearth-desktop && CGO_ENABLED=1 go build -tags "$TAGS" -o "$ROOT/hearth-desktop" .)
  echo "built ./hearth-desktop"
}

case "${1:-}" in
  --deps) deps; exit 0 ;;
  --build) deps; build; exit 0 ;;
  --install)
    deps; build
    bin=${XDG_BIN_HOME:-$HOME/.local/bin}
    data=${XDG_DATA_HOME:-$HOME/.local/share}
    install -D -m 0755 hearth-desktop "$bin/hearth-desktop"
    install -D -m 0644 cmd/hearth-desktop/packaging/dev.hearth.Hearth.desktop "$data/applications/dev.hearth.Hearth.desktop"
    install -D -m 0644 cmd/hearth-desktop/packaging/dev.hearth.Hearth.svg "$data/icons/hicolor/scalable/apps/dev.hearth.Hearth.svg"
    install -D -m 0644 cmd/hearth-desktop/packaging/hearth.png "$data/icons/hicolor/256x256/apps/dev.hearth.Hearth.png"
    command -v update-desktop-database >/dev/null && update-desktop-database -q "$data/applications" || true
    echo "installed $bin/hearth-desktop, with Hearth in the applications menu"
    exit 0 ;;
  "") ;;
  *) echo "usage: scripts/desktop.sh [--deps|--build|--install]" >&2; exit 2 ;;
esac

deps
cd cmd/hearth-desktop
log "go vet (-tags $TAGS)"
go vet -tags "$TAGS" ./...
go vet -tags "$TAGS,hearthprobe" . # the test's build, with the probe
log "gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi
log "go mod tidy (cmd/hearth-desktop)"
if ! go mod tidy -e -diff >/dev/null 2>&1; then
  go mod tidy -e -diff 2>&1 | awk '/^diff /{f=($0 ~ /go\.mod/)} f' | grep . && {
    echo "cmd/hearth-desktop/go.mod is not tidy: run 'go mod tidy -e' there and commit the result"; exit 1; }
fi
log "staticcheck (-tags $TAGS)"
go run "honnef.co/go/tools/cmd/staticcheck@${STATICCHECK_VERSION:-v0.8.2}" -tags "$TAGS" ./...
log "go test -race: unit tests, and the real app in Xvfb"
# -timeout detects a hang; each wait inside the test is bounded too.
HEARTH_DESKTOP_E2E=1 go test -race -count=1 -timeout 20m -tags "$TAGS" ./...
