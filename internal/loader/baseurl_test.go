package loader

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckBaseURL(t *testing.T) {
	good := []string{"", "http://127.0.0.1:11434", "https://gpu-box/v1", "localhost", "localhost:11434", ":11434",
		"0.0.0.0", "gpu-box:11434/", "::1", "[::1]:11434", "http://[::1]:8080", "HTTP://localhost", "http://:8000/v1", "my.host.lan"}
	for _, s := range good {
		if err := CheckBaseURL(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	bad := map[string]string{
		"htp://x":             `the scheme "htp" is not http or https`,
		"ftp://localhost":     `the scheme "ftp" is not http or https`,
		"http://":             "it names no host",
		"https:///v1":         "it names no host",
		"http://[::1":         "does not parse as a URL: missing ']' in host",
		"http://a b":          "does not parse as a URL",
		"http://x:abc":        "does not parse as a URL",
		"http://x:99999":      "the port 99999 is not between 1 and 65535",
		"http:/localhost":     `the scheme "http" is not followed by ://`,
		"https:localhost:443": `the scheme "https" is not followed by ://`,
		"http//gpu:8000":      `the scheme "http" is not followed by ://`,
		"htp:x":               `the scheme "htp" is not followed by ://`,
	}
	for s, want := range bad {
		if err := CheckBaseURL(s); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", s, err, want)
		}
	}
}

// TestBadBaseURLIsAConfigError: a bad address is the user's to fix, and
// the message names where it came from.
func TestBadBaseURLIsAConfigError(t *testing.T) {
	for _, tc := range []struct {
		user, flag string
		env        map[string]string
		want       string
	}{
		{flag: "htp://x", want: `--base-url "htp://x" is not a model server's address: the scheme "htp" is not http or https; write it as http://HOST:PORT (for example http://127.0.0.1:11434)`},
		{env: map[string]string{"OLLAMA_HOST": "http://"}, want: `OLLAMA_HOST "http://" is not a model server's address: it names no host`},
		{env: map[string]string{"HEARTH_PROVIDER": "openai", "OPENAI_BASE_URL": "htps://vllm:8000"}, want: `OPENAI_BASE_URL "htps://vllm:8000" is not a model server's address: the scheme "htps" is not http or https; write it as http://HOST:PORT (for example http://localhost:8000/v1)`},
		// A flag wins over the environment: a bad variable it overrides is not used.
		{flag: "http://127.0.0.1:11434", env: map[string]string{"OLLAMA_HOST": "htp://x"}},
		{user: "default_provider = \"gpu\"\n[providers.gpu]\nkind = \"openai\"\nbase_url = \"http//gpu:8000\"\n", want: `base_url of [providers.gpu] in your config "http//gpu:8000" is not a model server's address`},
	} {
		o, _ := setup(t, tc.user, "", nil)
		o.Provider.BaseURL = tc.flag
		getenv := o.Getenv
		o.Getenv = func(k string) string {
			if v, ok := tc.env[k]; ok {
				return v
			}
			return getenv(k)
		}
		_, _, err := ProviderOnly(o)
		var ce ConfigError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.want != "" && (!errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v:\n got %v\nwant %s", tc, err, tc.want)
		}
	}
}
