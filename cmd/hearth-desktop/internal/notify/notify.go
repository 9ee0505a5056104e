// Package notify shows desktop notifications through the freedesktop.org
// notification service on the session bus (what GNOME, KDE, XFCE and
// notification daemons such as dunst or mako provide).
package notify

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
)

const (
	service = "org.freedesktop.Notifications"
	object  = "/org/freedesktop/Notifications"
)

// Notifier sends notifications as the application App. The zero value is
// not usable: use New. It connects to the session bus at the first Send and
// keeps the connection; it is safe for concurrent use.
type Notifier struct {
	app  string
	icon string

	mu   sync.Mutex
	conn *dbus.Conn
	last uint32 // the id of the notification shown last, replaced by the next
}

// New returns a notifier for the application named app, with the icon
// named icon (a name from the icon theme, or an absolute path; "" for none).
func New(app, icon string) *Notifier { return &Notifier{app: app, icon: icon} }

// Send shows a notification with a title and a body, replacing the one this
// notifier showed before (one waiting approval, one notification). It
// fails when there is no session bus or no notification service on it.
func (n *Notifier) Send(ctx context.Context, title, body string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		// Never a bus started for this (dbus-launch): it would outlive
		// the app.
		c, err := dbus.SessionBusPrivateNoAutoStartup(dbus.WithContext(context.WithoutCancel(ctx)))
		if err == nil {
			if err = c.Auth(nil); err == nil {
				err = c.Hello()
			}
			if err != nil {
				c.Close()
			}
		}
		if err != nil {
			return fmt.Errorf("showing a notification: no session bus: %w", err)
		}
		n.conn = c
	}
	// A notification service that does not answer must not hold up the
	// app (its quit waits for this lock).
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	hints := map[string]dbus.Variant{"urgency": dbus.MakeVariant(byte(2)), "category": dbus.MakeVariant("im.received")}
	var id uint32
	call := n.conn.Object(service, object).CallWithContext(ctx, service+".Notify", 0,
		n.app, n.last, n.icon, title, escapeMarkup(body), []string{}, hints, int32(-1))
	if err := call.Store(&id); err != nil {
		if !n.conn.Connected() {
			// The bus went (a new login session): connect again next time.
			n.conn.Close()
			n.conn = nil
		}
		return fmt.Errorf("showing a notification: %w", err)
	}
	n.last = id
	return nil
}

// sendTimeout bounds one notification.
const sendTimeout = 5 * time.Second

// escapeMarkup escapes what notification servers may read as markup in a
// body (the spec allows <b>, <a href>, <img>): the text is the model's.
func escapeMarkup(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Close closes the connection to the bus.
func (n *Notifier) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		return nil
	}
	err := n.conn.Close()
	n.conn = nil
	return err
}
