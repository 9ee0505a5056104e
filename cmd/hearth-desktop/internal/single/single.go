// Package single keeps one instance of the desktop app per login session:
// the first launch owns a name on the session bus; a later one hands its
// arguments to the first (which comes to the front) and exits before it
// does anything else.
package single

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hearth-agent/hearth/config"
)

// Launch is what a later launch hands over: its arguments and the
// directory it was started in (relative folders are relative to it).
type Launch struct {
	Args []string
	Dir  string
}

// Instance is the first launch's hold on the name; Close releases it.
type Instance struct{ conn *dbus.Conn }

// ErrNoBus says there is no session bus to keep one instance on: every
// launch then runs on its own.
var ErrNoBus = errors.New("no session bus: more than one window may run")

const iface = "dev.hearth.Desktop"

// Claim tries to be the first instance under name (a D-Bus well-known name
// such as "dev.hearth.Hearth"). As the first it returns an Instance, and
// each later launch calls onLaunch (on a goroutine of its own). When
// another instance holds the name, it hands that one launch and returns
// first=false: the caller exits. The session bus is used only when it is
// there to reach (DBUS_SESSION_BUS_ADDRESS, or $XDG_RUNTIME_DIR/bus):
// never started for this, since a bus started here would outlive the app.
func Claim(ctx context.Context, name string, launch Launch, onLaunch func(Launch)) (inst *Instance, first bool, err error) {
	if err := config.SessionBus(os.Getenv); err != nil {
		return nil, true, fmt.Errorf("%w (%v)", ErrNoBus, err)
	}
	conn, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		return nil, true, fmt.Errorf("%w (%v)", ErrNoBus, err)
	}
	if err := conn.Auth(nil); err != nil {
		conn.Close()
		return nil, true, fmt.Errorf("%w (%v)", ErrNoBus, err)
	}
	if err := conn.Hello(); err != nil {
		conn.Close()
		return nil, true, fmt.Errorf("%w (%v)", ErrNoBus, err)
	}
	path := dbus.ObjectPath("/dev/hearth/Desktop")
	if err := conn.Export(handler(onLaunch), path, iface); err != nil {
		conn.Close()
		return nil, true, err
	}
	reply, err := conn.RequestName(name, dbus.NameFlagDoNotQueue)
	if err != nil {
		conn.Close()
		return nil, true, err
	}
	if reply == dbus.RequestNameReplyPrimaryOwner || reply == dbus.RequestNameReplyAlreadyOwner {
		return &Instance{conn: conn}, true, nil
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	call := conn.Object(name, path).CallWithContext(cctx, iface+".Launch", 0, launch.Args, launch.Dir)
	if call.Err != nil {
		return nil, false, fmt.Errorf("handing the launch to the running window: %w", call.Err)
	}
	return nil, false, nil
}

// Close releases the name.
func (i *Instance) Close() error {
	if i == nil || i.conn == nil {
		return nil
	}
	return i.conn.Close()
}

// handler answers later launches at once and handles them after.
type handler func(Launch)

// Launch is the method later launches call.
func (h handler) Launch(args []string, dir string) *dbus.Error {
	go h(Launch{Args: args, Dir: dir})
	return nil
}
