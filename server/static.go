package server

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// ui holds the web UI's built files: index.html at the root, hashed assets
// under assets/. They are built from web/ (npm run build there) and
// committed, so that building Hearth needs no Node; scripts/web.sh checks
// that they match their sources.
//
//go:embed ui
var ui embed.FS

func embeddedUI() fs.FS {
	sub, err := fs.Sub(ui, "ui")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// contentSecurityPolicy lets the UI load only its own files and talk only
// to this server; no inline scripts or style sheets (styles the page sets
// from script go through the CSSOM, which this allows), no framing (the
// approve button must not be clickjacked).
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; font-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// static serves the UI. A path with no file extension that is not a file
// gets index.html, so that the UI's own routes survive a reload.
func (s *Server) static(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "index.html"
	}
	h := w.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Frame-Options", "DENY")
	fi, err := fs.Stat(s.assets, name)
	if err != nil || fi.IsDir() {
		if path.Ext(name) != "" {
			http.Error(w, "404 not found", http.StatusNotFound)
			return
		}
		name = "index.html"
	}
	if strings.HasPrefix(name, "assets/") {
		h.Set("Cache-Control", "public, max-age=31536000, immutable") // names carry a content hash
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	http.ServeFileFS(w, r, s.assets, name)
}
