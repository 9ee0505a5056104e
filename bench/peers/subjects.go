package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// prompt is the task every CLI is given.
const prompt = "what does a.txt say?"

// setup is what a subject needs to run: a new HOME for this repetition
// (config files written into it), the workspace, the mock's URL.
type setup struct {
	Home, WS, MockURL string
}

// subject is one program measured.
type subject struct {
	Key  string // name on the command line (-only)
	Name string // row label
	// Package is the npm package (peers), "" for Hearth and hello.
	Package string
	// Bin is the program, relative to the peer's install directory
	// (peers) or absolute (Hearth, hello: set from flags).
	Bin string
	// Wire says which API the CLI spoke to the mock.
	Wire string
	// Tool describes the read-file call the mock makes.
	Tool string
	// Configure writes config into s.Home and returns the arguments and
	// the environment (added to a clean one: PATH, HOME, TMPDIR, LANG).
	Configure func(s setup) (args, env []string, plan toolPlan, err error)
	// Want is what stdout must contain for the run to count.
	Want string
	// Reference: Hearth or hello-world, whose failure breaks the harness.
	Reference bool
	// NoModel: the program makes no model requests (hello-world,
	// hearth --version).
	NoModel bool
	// Notes are printed under the table.
	Notes string
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, string(b)+"\n")
}

// subjects returns every program measured, in the order of the table.
// hearthBin and helloBin are the copied binaries.
func subjects(hearthBin, helloBin string) []subject {
	return []subject{
		{
			Key: "hello", Name: "Go hello-world", Bin: helloBin, Reference: true, NoModel: true,
			Wire: "—", Tool: "—", Want: "hello, world",
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				return nil, nil, toolPlan{}, nil
			},
		},
		{
			Key: "hearth-version", Name: "hearth --version", Bin: hearthBin, Reference: true, NoModel: true,
			Wire: "—", Tool: "—", Want: "hearth ",
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				return []string{"--version"}, []string{"HEARTH_HOME=" + filepath.Join(s.Home, ".hearth")}, toolPlan{}, nil
			},
			Notes: "Hearth's process start and package initialisation alone, for splitting its figure.",
		},
		{
			Key: "hearth", Name: "Hearth", Bin: hearthBin, Reference: true,
			Wire: "Ollama /api/chat (NDJSON)", Tool: `read_file {"file_path":"a.txt"}`, Want: answer,
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				return []string{"-m", "m", "-w", s.WS, "run", prompt},
					[]string{"HEARTH_HOME=" + filepath.Join(s.Home, ".hearth"), "OLLAMA_HOST=" + s.MockURL, "NO_COLOR=1"},
					toolPlan{Name: "read_file", Args: map[string]any{"file_path": "a.txt"}}, nil
			},
			Notes: "`hearth -m m -w WS run PROMPT`, OLLAMA_HOST at the mock; a new session every run. " +
				"Besides the two model requests it asks /api/show once (the model's window).",
		},
		{
			Key: "hearth-openai", Name: "Hearth (OpenAI wire)", Bin: hearthBin, Reference: true,
			Wire: "OpenAI /v1/chat/completions (SSE)", Tool: `read_file {"file_path":"a.txt"}`, Want: answer,
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				return []string{"-m", "m", "-w", s.WS, "run", prompt},
					[]string{"HEARTH_HOME=" + filepath.Join(s.Home, ".hearth"), "OPENAI_BASE_URL=" + s.MockURL + "/v1", "OPENAI_API_KEY=bench", "NO_COLOR=1"},
					toolPlan{Name: "read_file", Args: map[string]any{"file_path": "a.txt"}}, nil
			},
			Notes: "the same with OPENAI_BASE_URL instead of OLLAMA_HOST, the wire Qwen Code and opencode speak.",
		},
		{
			Key: "codex", Name: "Codex", Package: "@openai/codex", Bin: "node_modules/.bin/codex",
			Wire: "OpenAI Responses /v1/responses (SSE)", Tool: `exec_command {"cmd":"cat a.txt"}`, Want: answer,
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				// Codex has no file-reading tool of its own in this
				// configuration: it reads with its shell tool.
				cfg := fmt.Sprintf(`model = "m"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"

[analytics]
enabled = false
`, s.MockURL+"/v1")
				if err := writeFile(filepath.Join(s.Home, ".codex", "config.toml"), cfg); err != nil {
					return nil, nil, toolPlan{}, err
				}
				return []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt},
					nil, toolPlan{Name: "exec_command", Args: map[string]any{"cmd": "cat a.txt"}}, nil
			},
			Notes: "`codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox PROMPT`; " +
				"~/.codex/config.toml: a provider `mock` (wire_api = \"responses\") at the mock, model `m` (Codex warns it has no metadata for it and uses its fallback), " +
				"`[analytics] enabled = false`, `check_for_update_on_startup = false`. Codex offers no read-file tool here; the mock calls its shell tool (`exec_command`) with `cat a.txt`. " +
				"The npm package's `codex` is a node script that starts the native binary, which starts shells of its own (environment snapshot, `lsb_release`, `git`).",
		},
		{
			Key: "gemini", Name: "Gemini CLI", Package: "@google/gemini-cli", Bin: "node_modules/.bin/gemini",
			Wire: "Gemini streamGenerateContent (SSE)", Tool: `read_file {"file_path":"a.txt"}`, Want: answer,
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				settings := map[string]any{
					"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
					"privacy":   map[string]any{"usageStatisticsEnabled": false},
					"telemetry": map[string]any{"enabled": false},
					"general": map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
						"disableAutoUpdate": true, "disableUpdateNag": true},
				}
				if err := writeJSONFile(filepath.Join(s.Home, ".gemini", "settings.json"), settings); err != nil {
					return nil, nil, toolPlan{}, err
				}
				return []string{"-m", "gemini-2.5-flash", "-p", prompt, "--yolo"},
					[]string{"GEMINI_API_KEY=bench", "GOOGLE_GEMINI_BASE_URL=" + s.MockURL, "GEMINI_CLI_TRUST_WORKSPACE=true"},
					toolPlan{Name: "read_file", Args: map[string]any{"file_path": "a.txt"}}, nil
			},
			Notes: "`gemini -m gemini-2.5-flash -p PROMPT --yolo`, GOOGLE_GEMINI_BASE_URL at the mock, GEMINI_API_KEY set, " +
				"GEMINI_CLI_TRUST_WORKSPACE=true (an untrusted folder turns --yolo off); ~/.gemini/settings.json: API-key auth, usage statistics, telemetry and auto-update off. " +
				"The model is named so that Gemini CLI does not route: with its default (`auto`) every turn first asks a classifier model (one more request, on the path). " +
				"`gemini` starts a second node process (it relaunches itself with a larger heap).",
		},
		{
			Key: "qwen", Name: "Qwen Code", Package: "@qwen-code/qwen-code", Bin: "node_modules/.bin/qwen",
			Wire: "OpenAI /v1/chat/completions (SSE)", Tool: `read_file {"file_path":"WS/a.txt"}`, Want: answer,
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				settings := map[string]any{
					"security":  map[string]any{"auth": map[string]any{"selectedType": "openai"}},
					"privacy":   map[string]any{"usageStatisticsEnabled": false},
					"telemetry": map[string]any{"enabled": false},
					"general":   map[string]any{"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
				}
				if err := writeJSONFile(filepath.Join(s.Home, ".qwen", "settings.json"), settings); err != nil {
					return nil, nil, toolPlan{}, err
				}
				return []string{"-p", prompt, "--yolo"},
					[]string{"OPENAI_API_KEY=bench", "OPENAI_BASE_URL=" + s.MockURL + "/v1", "OPENAI_MODEL=m", "QWEN_CODE_SUPPRESS_YOLO_WARNING=1"},
					// Its read_file takes absolute paths only.
					toolPlan{Name: "read_file", Args: map[string]any{"file_path": filepath.Join(s.WS, "a.txt")}}, nil
			},
			Notes: "`qwen -p PROMPT --yolo`, OPENAI_BASE_URL/OPENAI_API_KEY/OPENAI_MODEL at the mock; ~/.qwen/settings.json: OpenAI auth, usage statistics, telemetry and auto-update off. " +
				"Its read_file wants an absolute path. The package asks for node >= 22 (engines); it ran on the node here.",
		},
		{
			Key: "opencode", Name: "opencode", Package: "opencode-ai", Bin: "node_modules/.bin/opencode",
			Wire: "OpenAI /v1/chat/completions (SSE)", Tool: `read {"filePath":"WS/a.txt"}`, Want: answer,
			Configure: func(s setup) ([]string, []string, toolPlan, error) {
				cfg := map[string]any{
					"$schema": "https://opencode.ai/config.json",
					"provider": map[string]any{"mock": map[string]any{
						"npm":     "@ai-sdk/openai-compatible",
						"name":    "mock",
						"options": map[string]any{"baseURL": s.MockURL + "/v1", "apiKey": "bench"},
						"models":  map[string]any{"m": map[string]any{"name": "m", "tool_call": true}},
					}},
					"model":       "mock/m",
					"small_model": "mock/m",
					"autoupdate":  false,
					"share":       "disabled",
					"permission":  map[string]any{"edit": "allow", "bash": "allow", "read": "allow", "external_directory": "allow"},
				}
				if err := writeJSONFile(filepath.Join(s.Home, ".config", "opencode", "opencode.json"), cfg); err != nil {
					return nil, nil, toolPlan{}, err
				}
				return []string{"run", prompt},
					[]string{"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1"},
					toolPlan{Name: "read", Args: map[string]any{"filePath": filepath.Join(s.WS, "a.txt")}}, nil
			},
			Notes: "`opencode run PROMPT`; ~/.config/opencode/opencode.json: a provider `mock` (@ai-sdk/openai-compatible, bundled in the binary) at the mock as model and small model, " +
				"autoupdate off, sharing disabled, permissions allowed; OPENCODE_DISABLE_AUTOUPDATE=1, OPENCODE_DISABLE_MODELS_FETCH=1 (no models.dev catalogue download). " +
				"Its `read` tool wants an absolute path. It also asks the small model for the session's title (a request without tools, counted as a side request), " +
				"concurrently with the first turn. The npm package installs a Bun-compiled binary (no node at run time).",
		},
	}
}

// cleanEnv is the environment every subject starts from: nothing of the
// user's but PATH and the locale.
func cleanEnv(home string) []string {
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + filepath.Join(home, "tmp"), "LANG=C.UTF-8", "TERM=dumb",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state")}
	os.MkdirAll(filepath.Join(home, "tmp"), 0o755)
	return env
}

// packageVersion reads an installed npm package's version.
func packageVersion(dir, pkg string) string {
	b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json"))
	if err != nil {
		return ""
	}
	var p struct {
		Version string `json:"version"`
	}
	json.Unmarshal(b, &p)
	return p.Version
}

// installProblem reads why run.sh could not install a peer, if it said.
func installProblem(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "install.failed"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
