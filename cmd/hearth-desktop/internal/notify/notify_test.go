// Tests of desktop notifications against a real, private D-Bus session
// bus: each test starts its own dbus-daemon (with a minimal configuration
// that has no service activation, so that no notification daemon installed
// on the machine can answer), points DBUS_SESSION_BUS_ADDRESS at it, and
// exports a fake org.freedesktop.Notifications service that records the
// Notify calls. They check that the app name, icon, title and body arrive
// with the hints and expiry the package sends, that each Send replaces the
// notification the one before it showed (and only a shown one), that Send
// fails clearly with no service or no bus and recovers when one appears,
// that a context bounds a call without closing the connection, that Close
// lets a later Send connect again, and that concurrent Sends stay in order.
// They skip only when dbus-daemon is not installed.
package notify_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/notify"
)

// hangTimeout bounds every wait, only to turn a hang into a failure.
const hangTimeout = 20 * time.Second

const (
	serviceName = "org.freedesktop.Notifications"
	objectPath  = "/org/freedesktop/Notifications"
)

const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// startBus starts a private session bus for the test and returns its
// address; the bus stops when the test ends.
func startBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("dbus-daemon is not installed")
	}
	// A short directory: a socket's path has about 100 bytes at most.
	dir, err := os.MkdirTemp("", "hbus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "session.conf")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(busConfig, filepath.Join(dir, "bus"))), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+cfg, "--nofork", "--print-address=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting dbus-daemon: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case addr := <-line:
		addr = strings.TrimSpace(addr)
		if addr == "" {
			t.Fatalf("dbus-daemon printed no address; stderr: %s", stderr.String())
		}
		return addr
	case <-time.After(hangTimeout):
		t.Fatal("dbus-daemon did not print its address")
	}
	return ""
}

// useBus starts a bus and makes it the session bus for the test.
func useBus(t *testing.T) string {
	addr := startBus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	return addr
}

type notifyCall struct {
	Sender   string
	App      string
	Replaces uint32
	Icon     string
	Summary  string
	Body     string
	Actions  []string
	Hints    map[string]dbus.Variant
	Expire   int32
}

// fakeService records the Notify calls it is sent and answers each with
// the next id (firstID, firstID+1, ...), or with an error while fail is
// set; while block is not nil a call waits for it to close.
type fakeService struct {
	conn *dbus.Conn

	mu    sync.Mutex
	calls []notifyCall
	next  uint32
	fail  bool
	block chan struct{}
}

// notifications is the exported object: Notify is its only method.
type notifications struct{ f *fakeService }

func (n notifications) Notify(sender dbus.Sender, app string, replaces uint32, icon, summary, body string,
	actions []string, hints map[string]dbus.Variant, expire int32) (uint32, *dbus.Error) {
	f := n.f
	f.mu.Lock()
	block := f.block
	f.mu.Unlock()
	if block != nil {
		<-block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, notifyCall{string(sender), app, replaces, icon, summary, body, actions, hints, expire})
	if f.fail {
		return 0, dbus.NewError("org.freedesktop.Notifications.Error.Test", []any{"the test says no"})
	}
	id := f.next
	f.next++
	return id, nil
}

// serve starts the fake service on the bus at addr, its ids from firstID.
func serve(t *testing.T, addr string, firstID uint32) *fakeService {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("the fake service cannot connect: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeService{conn: conn, next: firstID}
	if err := conn.Export(notifications{f}, objectPath, serviceName); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(serviceName, dbus.NameFlagDoNotQueue)
	if err != nil {
		t.Fatal(err)
	}
	if reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("the fake service does not own %s: reply %v", serviceName, reply)
	}
	return f
}

func (f *fakeService) recorded() []notifyCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]notifyCall(nil), f.calls...)
}

func (f *fakeService) setFail(fail bool) {
	f.mu.Lock()
	f.fail = fail
	f.mu.Unlock()
}

// send calls Send with a bound, only to turn a hang into a failure.
func send(t *testing.T, n *notify.Notifier, title, body string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	return n.Send(ctx, title, body)
}

func TestSend(t *testing.T) {
	addr := useBus(t)
	f := serve(t, addr, 41)
	n := notify.New("Hearth", "io.github.hearth-agent.Hearth")
	defer n.Close()
	sends := []struct{ title, body string }{
		{"Approval needed", "Run `go test ./...` in /home/u/proj?"},
		{"Approval needed", "Write <b>main.go</b> & \"go.mod\"?"},
		{"Ünïcødé ✓ 通知", "Ligne 1\nLigne 2\ttabulée"},
		{"Empty body", ""},
		{"", "Empty title"},
		{"Long", strings.Repeat("lorem ipsum ", 2000)},
	}
	for i, s := range sends {
		if err := send(t, n, s.title, s.body); err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
	}
	calls := f.recorded()
	if len(calls) != len(sends) {
		t.Fatalf("%d calls arrived, want %d", len(calls), len(sends))
	}
	for i, c := range calls {
		if c.App != "Hearth" {
			t.Errorf("call %d: app %q", i, c.App)
		}
		if c.Icon != "io.github.hearth-agent.Hearth" {
			t.Errorf("call %d: icon %q", i, c.Icon)
		}
		// The body's markup is escaped: the text is the model's, and
		// servers may render <b>, <a href>, <img>.
		wantBody := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(sends[i].body)
		if c.Summary != sends[i].title || c.Body != wantBody {
			t.Errorf("call %d: %q / %q, want %q / %q", i, c.Summary, c.Body, sends[i].title, wantBody)
		}
		want := uint32(0)
		if i > 0 {
			want = uint32(41 + i - 1) // the id the service gave the call before
		}
		if c.Replaces != want {
			t.Errorf("call %d: replaces_id %d, want %d", i, c.Replaces, want)
		}
		if len(c.Actions) != 0 {
			t.Errorf("call %d: actions %q, want none", i, c.Actions)
		}
		if c.Expire != -1 {
			t.Errorf("call %d: expire_timeout %d, want -1 (the server's default)", i, c.Expire)
		}
		if u, ok := c.Hints["urgency"].Value().(byte); !ok || u != 2 {
			t.Errorf("call %d: urgency hint %v, want byte 2", i, c.Hints["urgency"])
		}
		if cat, ok := c.Hints["category"].Value().(string); !ok || cat != "im.received" {
			t.Errorf("call %d: category hint %v", i, c.Hints["category"])
		}
		if c.Sender != calls[0].Sender {
			t.Errorf("call %d came from %s, call 0 from %s: the connection was not kept", i, c.Sender, calls[0].Sender)
		}
	}
}

func TestSendNoIcon(t *testing.T) {
	addr := useBus(t)
	f := serve(t, addr, 1)
	n := notify.New("Other app", "")
	defer n.Close()
	if err := send(t, n, "t", "b"); err != nil {
		t.Fatal(err)
	}
	calls := f.recorded()
	if len(calls) != 1 || calls[0].App != "Other app" || calls[0].Icon != "" {
		t.Errorf("calls %+v", calls)
	}
}

// TestFailedSendDoesNotReplace: when the service refuses a notification,
// Send says so, and the next one still replaces the last one shown.
func TestFailedSendDoesNotReplace(t *testing.T) {
	addr := useBus(t)
	f := serve(t, addr, 7)
	n := notify.New("Hearth", "")
	defer n.Close()
	if err := send(t, n, "one", ""); err != nil {
		t.Fatal(err)
	}
	f.setFail(true)
	err := send(t, n, "two", "")
	if err == nil {
		t.Fatal("Send gave no error when the service refused")
	}
	if !strings.Contains(err.Error(), "notification") {
		t.Errorf("unclear error: %v", err)
	}
	var de dbus.Error
	if !errors.As(err, &de) || de.Name != "org.freedesktop.Notifications.Error.Test" {
		t.Errorf("the service's error is not kept: %v", err)
	}
	f.setFail(false)
	if err := send(t, n, "three", ""); err != nil {
		t.Fatal(err)
	}
	calls := f.recorded()
	if len(calls) != 3 {
		t.Fatalf("%d calls", len(calls))
	}
	for i, want := range []uint32{0, 7, 7} {
		if calls[i].Replaces != want {
			t.Errorf("call %d (%s): replaces_id %d, want %d", i, calls[i].Summary, calls[i].Replaces, want)
		}
	}
}

// TestSendNoService: a bus with nobody owning the service's name.
func TestSendNoService(t *testing.T) {
	addr := useBus(t)
	n := notify.New("Hearth", "")
	defer n.Close()
	for i := 0; i < 2; i++ {
		err := send(t, n, "hello", "world")
		if err == nil {
			t.Fatal("Send gave no error with no notification service")
		}
		if !strings.Contains(err.Error(), "notification") {
			t.Errorf("unclear error: %v", err)
		}
		var de dbus.Error
		if !errors.As(err, &de) || de.Name != "org.freedesktop.DBus.Error.ServiceUnknown" {
			t.Errorf("error %v, want one of name org.freedesktop.DBus.Error.ServiceUnknown", err)
		}
	}
	// A service that starts later gets the next one.
	f := serve(t, addr, 5)
	if err := send(t, n, "hello", "again"); err != nil {
		t.Fatalf("Send once the service is there: %v", err)
	}
	if calls := f.recorded(); len(calls) != 1 || calls[0].Body != "again" || calls[0].Replaces != 0 {
		t.Errorf("calls %+v", calls)
	}
}

// TestSendNoBus: DBUS_SESSION_BUS_ADDRESS names a socket that is not
// there; once it names a bus, Send connects.
func TestSendNoBus(t *testing.T) {
	missing := "unix:path=" + filepath.Join(t.TempDir(), "no-such-bus")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", missing)
	n := notify.New("Hearth", "")
	defer n.Close()
	for i := 0; i < 2; i++ {
		err := send(t, n, "hello", "world")
		if err == nil {
			t.Fatal("Send gave no error with no bus")
		}
		if !strings.Contains(err.Error(), "no session bus") {
			t.Errorf("unclear error: %v", err)
		}
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close after failed Sends: %v", err)
	}
	addr := useBus(t)
	f := serve(t, addr, 1)
	if err := send(t, n, "hello", "bus"); err != nil {
		t.Fatalf("Send once there is a bus: %v", err)
	}
	if calls := f.recorded(); len(calls) != 1 || calls[0].Body != "bus" {
		t.Errorf("calls %+v", calls)
	}
}

// TestSendContext: the context bounds the call, and ending the context
// of the Send that connected does not close the connection.
func TestSendContext(t *testing.T) {
	addr := useBus(t)
	f := serve(t, addr, 10)
	n := notify.New("Hearth", "")
	defer n.Close()

	ctx, cancel := context.WithCancel(context.Background())
	if err := n.Send(ctx, "first", ""); err != nil {
		t.Fatal(err)
	}
	cancel()
	for i := 0; i < 20; i++ {
		if err := send(t, n, fmt.Sprint("after cancel ", i), ""); err != nil {
			t.Fatalf("Send %d after the first Send's context ended: %v", i, err)
		}
	}

	// A call the service does not answer ends with its context.
	release := make(chan struct{})
	f.mu.Lock()
	f.block = release
	f.mu.Unlock()
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Send(ctx, "blocked", "") }()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Send with a context that ran out: %v, want DeadlineExceeded", err)
		}
	case <-time.After(hangTimeout):
		t.Fatal("Send did not return when its context ended")
	}
	f.mu.Lock()
	f.block = nil
	f.mu.Unlock()
	close(release)

	if err := send(t, n, "last", ""); err != nil {
		t.Fatalf("Send after a timed-out one: %v", err)
	}
	calls := f.recorded()
	var last *notifyCall
	for i := range calls {
		if calls[i].Summary == "last" { // the blocked call may be recorded after it
			last = &calls[i]
		}
	}
	if last == nil {
		t.Fatal("the last call did not arrive")
	}
	// The shown ones were 10 (first) and 11..30 (after cancel); the blocked
	// one's id never came back to the notifier.
	if last.Replaces != 30 {
		t.Errorf("replaces_id %d, want 30 (the last id Send got back)", last.Replaces)
	}
	for _, c := range calls {
		if c.Sender != calls[0].Sender {
			t.Fatalf("calls from %s and %s: the connection was not kept", calls[0].Sender, c.Sender)
		}
	}
}

// TestClose: Close before any Send and twice is fine; a Send after Close
// connects again and still replaces the last notification.
func TestClose(t *testing.T) {
	addr := useBus(t)
	f := serve(t, addr, 3)
	n := notify.New("Hearth", "")
	if err := n.Close(); err != nil {
		t.Errorf("Close before Send: %v", err)
	}
	if err := send(t, n, "one", ""); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := send(t, n, "two", ""); err != nil {
		t.Fatalf("Send after Close: %v", err)
	}
	defer n.Close()
	calls := f.recorded()
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	if calls[0].Sender == calls[1].Sender {
		t.Errorf("both calls came from %s: Close did not close the connection", calls[0].Sender)
	}
	if calls[1].Replaces != 3 {
		t.Errorf("replaces_id %d after Close, want 3", calls[1].Replaces)
	}
}

// TestConcurrentSends: Sends from many goroutines all arrive, one at a
// time, each replacing the one that arrived before it.
func TestConcurrentSends(t *testing.T) {
	addr := useBus(t)
	f := serve(t, addr, 1)
	n := notify.New("Hearth", "")
	defer n.Close()
	const goroutines, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if err := send(t, n, fmt.Sprintf("g%d", g), fmt.Sprint(i)); err != nil {
					errs <- err
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	calls := f.recorded()
	if len(calls) != goroutines*each {
		t.Fatalf("%d calls, want %d", len(calls), goroutines*each)
	}
	for i, c := range calls {
		if c.Replaces != uint32(i) { // call i got id i+1; the first replaces 0
			t.Errorf("call %d: replaces_id %d, want %d", i, c.Replaces, i)
		}
	}
}
