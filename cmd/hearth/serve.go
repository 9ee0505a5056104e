package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/server"
	"github.com/hearth-agent/hearth/session"
)

// serveFlags are the options of hearth serve.
type serveFlags struct {
	addr         string
	allowHosts   []string
	allowOrigins []string
	maxBody      int64
	approvalMode string
}

// defaultServeAddr is where hearth serve listens: loopback only.
const defaultServeAddr = "127.0.0.1:8437"

func (a *app) serveCommand() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API and the web UI on 127.0.0.1",
		Long: `Serve Hearth's HTTP API (REST and Server-Sent Events under /v1, described
at /v1/openapi.json and in docs/api.md) and the web UI, for a browser or
another program on this machine.

It listens on 127.0.0.1 only. Every API request needs the bearer token that
is generated on the first start and kept in the config directory (api-token,
readable by you only); the address printed at start carries it for the web
UI. HEARTH_API_TOKEN sets the token instead. The Host header must name this
machine's loopback address with the port (a guard against DNS rebinding):
--allow-host adds names; browsers may call the API only from the web UI's own
origin: --allow-origin adds origins (a desktop shell, a dev server).

The agent runs with the "api" profile: the read-only file tools and the
approval mode "default", unless [profiles.api] in the config (or --profile)
says otherwise. Calls that need approval wait for an answer from the client.`,
		Example: `  hearth serve -m qwen3:4b
  hearth serve --addr 127.0.0.1:9000 --allow-origin http://localhost:5173
  HEARTH_API_TOKEN=$(cat ~/.hearth-token) hearth serve`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.serve(cmd.Context(), f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", defaultServeAddr, "address to listen on (port 0 picks a free one)")
	fl.StringSliceVar(&f.allowHosts, "allow-host", splitList(a.getenv("HEARTH_ALLOWED_HOSTS")), "another name clients use for this server, for the Host check (env HEARTH_ALLOWED_HOSTS, comma-separated)")
	fl.StringSliceVar(&f.allowOrigins, "allow-origin", splitList(a.getenv("HEARTH_ALLOWED_ORIGINS")), "another origin allowed to call the API from a browser, such as http://localhost:5173 (env HEARTH_ALLOWED_ORIGINS)")
	fl.Int64Var(&f.maxBody, "max-body", server.DefaultMaxBodyBytes, "largest request body, in bytes")
	fl.StringVar(&f.approvalMode, "approval-mode", "", "default, auto_edit, yolo or plan (default: the profile's)")
	return cmd
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// serve runs the API until ctx ends (Ctrl-C).
func (a *app) serve(ctx context.Context, f serveFlags) error {
	longRunning(a.getenv)
	if f.approvalMode != "" {
		if _, err := agent.ParseMode(f.approvalMode); err != nil {
			return usageError{err}
		}
	}
	if f.maxBody <= 0 {
		return usageError{errors.New("--max-body must be a positive number of bytes")}
	}
	o, err := a.appOptions("api")
	if err != nil {
		return err
	}
	o.ApprovalMode = f.approvalMode
	token, where, err := a.apiToken(o.Paths)
	if err != nil {
		return err
	}
	bot, l, err := start(ctx, o)
	if err != nil {
		return err
	}
	defer l.Close()
	defer bot.Close()

	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w (is another hearth serve running? choose another port with --addr 127.0.0.1:PORT)", f.addr, err)
	}
	defer ln.Close()
	hosts := f.allowHosts
	browse := "http://" + ln.Addr().String()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok {
		switch {
		case tcp.IP.IsUnspecified():
			browse = fmt.Sprintf("http://127.0.0.1:%d", tcp.Port)
			fmt.Fprintf(a.io.err, "hearth: warning: listening on every interface (%s): anyone who can reach this machine and has the token can use the agent; other machines must use a name given with --allow-host\n", ln.Addr())
		case !tcp.IP.IsLoopback():
			// An address literal cannot be rebound by DNS: clients may
			// use the one we listen on.
			hosts = append(hosts, tcp.IP.String())
			fmt.Fprintf(a.io.err, "hearth: warning: listening on %s, not on loopback: anyone who can reach it and has the token can use the agent\n", ln.Addr())
		}
	}
	log := o.Log
	// Every workspace the store knows is served, each session in its
	// own workspace's agent.
	agents := loader.NewAgents(ctx, o, bot, l)
	defer agents.Close()
	api, err := server.New(bot, server.Options{Token: token, AllowedHosts: hosts, AllowedOrigins: f.allowOrigins,
		MaxBodyBytes: f.maxBody, ProviderURL: l.ProviderConfig.BaseURL, Version: buildinfo.Version, Log: log, Workspaces: agents,
		Currency: strings.TrimSpace(l.File.Pricing.Currency)})
	if err != nil {
		return usageError{err}
	}
	hs := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	w := a.io.out
	fmt.Fprintf(w, "Hearth is serving its API and web UI at %s\n", browse)
	if m := l.ProviderConfig.Model; m != "" {
		fmt.Fprintf(w, "  model     %s (%s at %s)\n", m, l.ProviderConfig.Kind, l.ProviderConfig.BaseURL)
	} else {
		fmt.Fprintf(w, "  model     none chosen: clients must name one per turn (or restart with --model)\n")
	}
	mode := string(bot.Mode())
	if mode == "" {
		mode = string(agent.ModeDefault)
	}
	fmt.Fprintf(w, "  tools     %s (approval mode %s)\n", strings.Join(bot.Tools(), ", "), mode)
	fmt.Fprintf(w, "  workspace %s, %s (%s); the web UI switches to the other workspaces Hearth knows, and adds folders\n", termtext.String(bot.Workspace()), l.Trust, l.TrustSource)
	fmt.Fprintf(w, "  token     %s\n", where)
	fmt.Fprintf(w, "  sessions  %s\n", session.Describe(bot.Store()))
	fmt.Fprintf(w, "Open the web UI:\n  %s/?token=%s\n", browse, url.QueryEscape(token))
	fmt.Fprintf(w, "Press Ctrl-C to stop.\n")

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		api.Close()
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	fmt.Fprintln(a.io.err, "hearth: stopping (running turns are cancelled; what they said is kept)")
	api.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		hs.Close()
	}
	<-errc
	return nil
}

// apiToken returns the API token and says where it comes from:
// HEARTH_API_TOKEN, else the token file in the config directory (made on
// the first start). HEARTH_API_TOKEN leaves the process environment once
// read (envscrub.Take): the programs Hearth starts must not inherit it, nor
// other processes read it in /proc/<pid>/environ.
func (a *app) apiToken(paths config.Paths) (token, where string, err error) {
	t := strings.TrimSpace(envscrub.Wrap(a.getenv)("HEARTH_API_TOKEN"))
	if err := envscrub.Take("HEARTH_API_TOKEN"); err != nil {
		a.logger().Debug("HEARTH_API_TOKEN is unset, but its value stays in /proc/<pid>/environ", "error", err)
	}
	if t != "" {
		if len(t) < 16 {
			return "", "", usageError{errors.New("HEARTH_API_TOKEN is shorter than 16 characters: use a longer, random one (or unset it to use a generated token)")}
		}
		return t, "from HEARTH_API_TOKEN", nil
	}
	path := filepath.Join(paths.ConfigDir, server.TokenFile)
	tok, created, err := server.LoadOrCreateToken(path)
	if err != nil {
		return "", "", usageError{err}
	}
	if created {
		return tok, "new, kept in " + path + " (readable by you only)", nil
	}
	return tok, "kept in " + path, nil
}
