// Command fakeollama is the model server of the desktop benchmark
// (bench/desktop/run.sh): it answers the questions Hearth asks of an Ollama
// server at start-up, and nothing else. The benchmark sends no message, so
// no model is needed; a chat request is answered 501.
//
//	fakeollama -addr 127.0.0.1:0 -model m
//
// It prints "listening on HOST:PORT" on stdout once it accepts connections,
// and with -log FILE appends one line per request (method and path).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	model := flag.String("model", "m", "the one model it has")
	logFile := flag.String("log", "", "append one line per request to this `file`")
	flag.Parse()

	var (
		mu  sync.Mutex
		out io.Writer = io.Discard
	)
	if *logFile != "" {
		f, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	details := map[string]any{"format": "gguf", "family": "llama", "parameter_size": "377K", "quantization_level": "F16"}
	send := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	known := func(name string) bool {
		return name == *model || name == *model+":latest" || strings.TrimSuffix(name, ":latest") == *model
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		mu.Lock()
		fmt.Fprintf(out, "%s %s\n", r.Method, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/", "/api/version":
			send(w, 200, map[string]string{"version": "0.13.0"})
		case "/api/tags":
			send(w, 200, map[string]any{"models": []map[string]any{{"name": *model, "model": *model, "size": 1000,
				"modified_at": "2026-11-21T16:25:56.713347395Z", "details": details}}})
		case "/api/ps":
			send(w, 200, map[string]any{"models": []any{}})
		case "/api/show":
			var req struct{ Model, Name string }
			json.Unmarshal(body, &req)
			name := req.Model
			if name == "" {
				name = req.Name
			}
			if !known(name) {
				send(w, 404, map[string]string{"error": fmt.Sprintf("model '%s' not found", name)})
				return
			}
			send(w, 200, map[string]any{
				"template":     "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n",
				"parameters":   "stop                           \"<|im_end|>\"",
				"model_info":   map[string]any{"general.architecture": "llama", "general.parameter_count": 376960, "llama.context_length": 32768},
				"capabilities": []string{"completion", "tools", "thinking"},
				"details":      details,
			})
		default:
			send(w, 501, map[string]string{"error": "fakeollama answers only what Hearth asks at start-up: " + r.URL.Path})
		}
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, h))
}
