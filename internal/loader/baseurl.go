package loader

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/llm/providers"
)

// schemeTypo matches an address that starts like a URL but lacks the "://"
// after its scheme ("http:/host", "http//host", "htp:host").
var schemeTypo = regexp.MustCompile(`^(?i:https?[:/]|[a-z][a-z0-9+-]*:[^0-9])`)

// CheckBaseURL says what is wrong with a model server's address, or returns
// nil. It accepts what the providers accept: a URL with the http or https
// scheme and a host, or, as OLLAMA_HOST is often written, a bare host, port
// or host:port ("127.0.0.1:11434", ":11434", "gpu-box"). An address that is
// not one (a misspelt scheme, no host, a port out of range, text that does
// not parse) would otherwise fail only when the server is called, as if the
// server were not running.
func CheckBaseURL(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	full := s
	if ip := net.ParseIP(strings.Trim(s, "[]")); ip != nil {
		return nil // a bare address, IPv6 ones included: "::1"
	}
	if !strings.Contains(s, "://") {
		if m := schemeTypo.FindString(s); m != "" {
			scheme, _, _ := strings.Cut(strings.TrimRight(m, ":/"), ":")
			return fmt.Errorf("the scheme %q is not followed by ://", strings.TrimRight(scheme, "/"))
		}
		full = "http://" + s
	}
	u, err := url.Parse(full)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("it does not parse as a URL: %v", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return fmt.Errorf("the scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("it names no host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("the port %s is not between 1 and 65535", p)
		}
	}
	return nil
}

// checkBaseURL checks the address the provider settings resolved to, and
// names where it came from, in the order providers.Resolve picks it.
func checkBaseURL(kind string, flags providers.Config, getenv func(string) string, name string, entry config.Provider) error {
	type source struct{ val, what string }
	sources := []source{{flags.BaseURL, "--base-url"}, {getenv("HEARTH_BASE_URL"), "HEARTH_BASE_URL"}}
	switch kind {
	case providers.KindOllama:
		sources = append(sources, source{getenv("OLLAMA_HOST"), "OLLAMA_HOST"})
	case providers.KindOpenAI, providers.KindResponses:
		sources = append(sources, source{getenv("OPENAI_BASE_URL"), "OPENAI_BASE_URL"})
	}
	file := "your config"
	if entry.FromProject {
		file = "the project's .hearth/config.toml"
	}
	sources = append(sources, source{entry.BaseURL, fmt.Sprintf("base_url of [providers.%s] in %s", name, file)})
	for _, s := range sources {
		if strings.TrimSpace(s.val) == "" {
			continue
		}
		if err := CheckBaseURL(s.val); err != nil {
			example := "http://127.0.0.1:11434"
			if kind == providers.KindOpenAI || kind == providers.KindResponses {
				example = "http://localhost:8000/v1"
			}
			return fmt.Errorf("%s %q is not a model server's address: %w; write it as http://HOST:PORT (for example %s)", s.what, s.val, err, example)
		}
		return nil // the one Resolve used
	}
	return nil
}
