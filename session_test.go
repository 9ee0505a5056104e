package hearth

import (
	"context"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
)

// TestIdleSessionReleasesItsTools: a session's built-in tools are released
// ten minutes after its last use, not before, and made again by its next
// turn; no private temp directory is made while no command runs. The clock
// is a synctest bubble's: the ten minutes pass at once, and exactly.
func TestIdleSessionReleasesItsTools(t *testing.T) {
	fake := llmtest.New(t)
	fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("one")), llmtest.OllamaStream("m", llmtest.Text("two")))
	ws, tmp, home := t.TempDir(), t.TempDir(), t.TempDir()
	tempDirs := func() int {
		entries, _ := os.ReadDir(tmp)
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "hearth-shell-") {
				n++
			}
		}
		return n
	}
	synctest.Test(t, func(t *testing.T) {
		bot, err := New(Config{
			Provider: ollama.New(ollama.Options{BaseURL: fake.URL, HTTPClient: fake.InMemory(), MaxRetries: -1}), Model: "m",
			Workspace: ws, Sandbox: Sandbox{TempRoot: tmp, Home: home}, ContextLength: 8192,
			Profile: Profile{Tools: []string{"read_file", "run_shell_command"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer bot.Close()
		s := bot.Session("s1")
		hasTools := func() bool {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.tools != nil
		}
		// New built one set of tools, which the first session takes.
		bot.mu.Lock()
		spare := bot.spare != nil
		bot.mu.Unlock()
		if !spare || hasTools() {
			t.Fatalf("before any turn: a spare set %v, the session's %v", spare, hasTools())
		}
		if _, err := bot.NewTurn(context.Background(), Request{SessionID: "s1", Message: "hi"}).Result(); err != nil {
			t.Fatal(err)
		}
		if !hasTools() {
			t.Fatal("no tools after a turn")
		}
		time.Sleep(bot.idleTools - time.Second)
		synctest.Wait()
		if !hasTools() {
			t.Fatalf("released before the session was idle for %v", bot.idleTools)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if hasTools() {
			t.Fatalf("still held after %v idle", bot.idleTools)
		}
		// The next turn makes them again, and the session kept its id.
		res, err := bot.NewTurn(context.Background(), Request{SessionID: "s1", Message: "again"}).Result()
		if err != nil || res.Text != "two" || !hasTools() {
			t.Fatalf("%+v %v, tools %v", res, err, hasTools())
		}
		// No command ran: no temp directory was made.
		if n := tempDirs(); n != 0 {
			t.Fatalf("%d temp dirs made without a command", n)
		}
	})
}
