package shell

import (
	"path/filepath"
	"strings"
)

// Container engines: their daemon (dockerd, podman's conmon) runs what it
// is asked to outside the sandbox.

// containerGlobals are the options of docker, podman and nerdctl (before
// the subcommand) that take a value.
var containerGlobals = optSpec{short: "cHl", long: []string{"config", "context", "host", "log-level",
	"tlscacert", "tlscert", "tlskey", "connection", "url", "identity", "root", "runroot",
	"storage-driver", "storage-opt", "cgroup-manager", "conmon", "events-backend", "hooks-dir",
	"network-cmd-path", "network-config-dir", "runtime", "runtime-flag", "tmpdir", "module",
	"ssh", "namespace", "address", "snapshotter", "cni-path", "cni-netconfpath", "data-root",
	"hosts-dir", "insecure-registry", "host-gateway-ip"}, stopAtOperand: true}

// composeReadOnly are the compose verbs that start nothing: they read
// state, or stop and remove what runs.
var composeReadOnly = set("ps", "ls", "logs", "config", "convert", "images", "top", "port",
	"version", "events", "stop", "down", "rm", "kill", "pause", "unpause", "pull", "push",
	"wait", "stats", "help")

// compose refuses compose verbs that create or start containers: the
// compose file says what they get (host directories, devices, privileges,
// the host's namespaces), and Hearth does not check it.
func (c *checker) compose(name string, args []string) *Refusal {
	p := operands(args, optSpec{short: "fp", long: []string{"file", "project-name", "project-directory",
		"profile", "env-file", "ansi", "progress", "parallel"}, stopAtOperand: true})
	if len(p.afterOpts) == 0 || composeReadOnly[p.afterOpts[0]] {
		return nil
	}
	return c.refuse(RuleUnchecked, "%s %s starts containers as the compose file says (host directories, devices, privileges) and the daemon runs them outside the sandbox; "+
		"Hearth does not check compose files. Run `docker run` with its options on the command line instead, or ask the user to start the services",
		name, p.afterOpts[0])
}

// containerOptions are the options of docker, podman and nerdctl that the
// policy looks at, wherever they are: every word is looked at (before the
// subcommand, after it, after the image), the value of an option too. They
// are read as the engines' flag parser (pflag) reads them: clusters
// (-itv SRC), -v=SRC, long names only in full. The short options listed
// take a value in every subcommand that mounts: -eVAR=v/x is not -v.
var containerOptions = optSpec{short: "ehmpuvw", long: []string{"volume", "mount", "pid", "ipc", "userns",
	"network", "net", "uts", "cgroupns", "device", "device-cgroup-rule", "cap-add", "security-opt",
	"volumes-from", "allow"}, exactLong: true, eqShort: true, throughDashes: true, peek: true}

// volumeCreateOptions are those of docker volume create (and podman's),
// read as containerOptions are.
var volumeCreateOptions = optSpec{short: "do", long: []string{"driver", "opt", "label", "name"},
	exactLong: true, eqShort: true, throughDashes: true, peek: true}

// hostNamespaces are the container options that, set to host, give the
// container one of the machine's namespaces.
var hostNamespaces = set("--pid", "--ipc", "--userns", "--network", "--net", "--uts", "--cgroupns")

// container refuses containers that would be given the host: privileged
// ones, ones given devices, capabilities, the machine's namespaces or a
// weaker security profile, and ones with a directory outside the workspace
// mounted into them (docker run -v /:/host gives the container the whole
// machine). The daemon (dockerd, podman's conmon) runs them, outside the
// sandbox: what the policy lets through here is all that stands between a
// command and the machine. Compose files, stacks and volumes with driver
// options cannot be checked, and are refused.
func (c *checker) container(name string, args []string) *Refusal {
	g := operands(args, containerGlobals)
	if len(g.afterOpts) > 0 {
		sub, rest := g.afterOpts[0], g.afterOpts[1:]
		if (sub == "container" || sub == "image") && len(rest) > 0 {
			sub, rest = rest[0], rest[1:] // docker container cp …
		}
		first := ""
		if ops := operands(rest, optSpec{stopAtOperand: true}).afterOpts; len(ops) > 0 {
			first = ops[0]
		}
		switch {
		case sub == "compose":
			return c.compose(name+" compose", rest)
		case sub == "stack" && (first == "deploy" || first == "up"):
			return c.refuse(RuleUnchecked, "%s stack deploy starts services as a compose file says, which Hearth does not check; ask the user to deploy it", name)
		case sub == "play" && first == "kube", sub == "kube" && first == "play":
			return c.refuse(RuleUnchecked, "%s kube play starts pods as a YAML file says (host paths, privileges), which Hearth does not check; run `%s run` with its options on the command line instead", name, name)
		case sub == "plugin" && (first == "install" || first == "enable" || first == "upgrade" || first == "create"):
			return c.refuse(RulePrivilege, "%s plugin %s: plugins run with the daemon's privileges, outside the sandbox; ask the user to install it", name, first)
		case sub == "volume" && first == "create":
			if operands(rest, volumeCreateOptions).has('o', "opt") {
				return c.refuse(RuleUnchecked, "%s volume create with driver options can bind any directory of the machine into a volume; create a plain volume, or mount a directory of the workspace with -v", name)
			}
		case sub == "cp":
			// docker cp CONTAINER:SRC DEST writes DEST here.
			if ops := operands(rest, optSpec{}).ops; len(ops) == 2 && !isRemote(ops[1]) && ops[1] != "-" {
				if r := c.path(opWrite, ops[1]); r != nil {
					return r
				}
			}
		case name == "podman" && sub == "unshare":
			// Runs a command here, as root of the user namespace.
			return c.nested(operands(rest, optSpec{stopAtOperand: true}).afterOpts)
		}
	}
	for _, o := range operands(args, containerOptions).opts {
		var src string
		opt := "--" + o.long
		switch {
		case o.short != 0:
			if o.short == 'v' {
				src = o.value
			}
		case o.long == "privileged":
			return c.refuse(RulePrivilege, "%s --privileged gives the container the machine", name)
		case hostNamespaces[opt] && o.value == "host":
			what := map[string]string{"--pid": "processes", "--ipc": "shared memory", "--userns": "users (its root is the machine's)",
				"--network": "network (its services and abstract sockets)", "--net": "network (its services and abstract sockets)",
				"--uts": "host name", "--cgroupns": "control groups"}[opt]
			return c.refuse(RulePrivilege, "%s %s=host gives the container the machine's %s; leave the container its own (publish ports with -p)", name, opt, what)
		case o.long == "device" || o.long == "device-cgroup-rule":
			return c.refuse(RulePrivilege, "%s %s gives the container a device of the machine (a disk, say), outside the sandbox; Hearth never does. Work on files in the workspace instead", name, opt)
		case o.long == "cap-add":
			return c.refuse(RulePrivilege, "%s --cap-add %s gives the container more power over the machine than it has by default; run it without", name, o.value)
		case o.long == "security-opt":
			if !strings.HasPrefix(o.value, "no-new-privileges") {
				return c.refuse(RulePrivilege, "%s --security-opt %s weakens the container's confinement (AppArmor, seccomp, SELinux); run it without (no-new-privileges is allowed)", name, o.value)
			}
		case o.long == "volumes-from":
			return c.refuse(RuleUnchecked, "%s --volumes-from gives the container the mounts of another container, which Hearth cannot check; mount a directory of the workspace with -v instead", name)
		case o.long == "allow":
			return c.refuse(RulePrivilege, "%s build --allow %s grants the build extra privileges (security.insecure, network.host); build without", name, o.value)
		case o.long == "volume" || o.long == "mount":
			src = o.value
		}
		if src == "" {
			continue
		}
		if strings.Contains(src, "volume-opt") || strings.Contains(src, "volume-driver") {
			return c.refuse(RuleUnchecked, "%s --mount with volume driver options can bind any directory of the machine; mount a directory of the workspace instead", name)
		}
		host := src
		if strings.Contains(src, "source=") || strings.Contains(src, "src=") {
			for _, kv := range strings.Split(src, ",") {
				k, v, _ := strings.Cut(kv, "=")
				if k == "source" || k == "src" {
					host = v
				}
			}
		} else {
			host, _, _ = strings.Cut(src, ":")
		}
		if !filepath.IsAbs(host) && !strings.HasPrefix(host, ".") && !strings.HasPrefix(host, "~") {
			continue // a named volume
		}
		if r := c.path(opWrite, host); r != nil {
			r.Reason = "mounting it into a container would let the container change it: " + r.Reason
			return r
		}
	}
	return nil
}
