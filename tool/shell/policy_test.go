package shell

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func testPolicy(t *testing.T) (*Policy, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	ws := filepath.Join(home, "ws")
	tmp := filepath.Join(base, "tmp")
	for _, d := range []string{filepath.Join(ws, "src"), tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return &Policy{Workspace: ws, Writable: []string{tmp}, FSRoot: "/", Home: home}, ws
}

// What a coding agent runs all day must not be refused.
func TestPolicyAllowsEverydayCommands(t *testing.T) {
	p, ws := testPolicy(t)
	for _, cmd := range []string{
		"go test ./...", "go build -o bin/app ./cmd/app", "npm install", "npm run build", "make -j4",
		"git status", "git commit -am 'fix'", "git clean -fdx", "git -C src log", "cargo test",
		"rm -rf node_modules", "rm -f *.o", "rm -rf build/ dist/", "rm -r src/old",
		"cp -r src dst", "cp /etc/hosts .", "mv a.txt b.txt", "mv -t src a b", "ln -s ../lib lib",
		"mkdir -p out/bin", "touch new.go", "chmod +x run.sh", "chmod -w ro.txt", "chmod -R u+w src",
		"find . -name '*.o' -delete", "find . -name '*.tmp' -exec rm {} +", "find src -type f | wc -l",
		"sed -i 's/a/b/' src/main.go", "sed -n 1,10p /etc/hosts", "perl -pi -e 's/a/b/' f.txt",
		"tar xzf a.tgz", "tar -C out -xzf a.tgz", "tar czf out.tgz src", "unzip -d out a.zip",
		"curl -o out.json https://example.com", "curl -s https://example.com | jq .", "wget -O page.html https://example.com",
		"sort -o sorted.txt in.txt", "uniq in.txt out.txt", "echo ok | tee log.txt", "dd if=/dev/zero of=img bs=1M count=1",
		"rsync -a src/ backup/", "rsync -a src/ host:/srv/", "install -d build", "install -m 644 a build/",
		"timeout 10 go test", "env FOO=1 go test", "nice -n 5 make", "nohup ./server", "xargs grep foo",
		"bash -c 'go vet ./...'", "sh -c 'echo $HOME'", "bash script.sh", "kill 1234", "kill -9 4321", "pkill -f myserver",
		"docker run -v $PWD:/src golang go test", "docker ps", "cat ~/.gitconfig", "ls -la / ~",
		"cd src", "cd " + ws, "cd $TMPDIR", "ls /etc | head", "python3 -c 'print(1)'", "crontab -l",
		"systemctl status nginx", "sysctl -a", "command -v go", "echo $((1+2))", "shred -u secret.txt",
		// Asking daemons to read, or to run what the command line says.
		"systemctl --user status app.service", "systemctl list-units --type=service", "systemctl",
		"systemctl --user is-active app", "systemctl cat nginx", "systemctl show -p MainPID nginx",
		"loginctl list-sessions", "service nginx status", "busctl list", "busctl --user tree org.foo",
		"docker compose ps", "docker compose logs -f web", "docker compose down", "docker-compose config",
		"docker build -t app .", "docker run --rm -p 8080:80 nginx", "docker run --rm --network mynet alpine",
		"docker run --security-opt no-new-privileges alpine true", "docker exec -it db psql", "docker images",
		"docker cp web:/app/out.txt ./out.txt", "docker cp build.tar web:/tmp/", "docker volume create data",
		"podman run --rm -v ./src:/src:Z alpine ls /src", "atq",
	} {
		if err := p.CheckScript(cmd, ws); err != nil {
			t.Errorf("%s: %v", cmd, err)
		}
	}
}

// Check works on argv after expansion; these have no shell syntax.
func TestPolicyCheck(t *testing.T) {
	p, ws := testPolicy(t)
	for _, tc := range []struct {
		argv []string
		dir  string
		rule string
	}{
		{[]string{"rm", "-rf", "/"}, ws, RuleRoot},
		{[]string{"rm", "-rf", "."}, ws, RuleWorkspace},
		{[]string{"rm", "-rf", "src"}, ws, ""},
		{[]string{"rm", "-rf", "src/../.."}, ws, RuleHome},
		{[]string{"rm", "x"}, "", ""}, // relative, directory unknown: checked at run time
		{[]string{"cp", "a", "b", "/usr/bin"}, ws, RuleSystem},
		{[]string{"cp", "-t", "/usr/bin", "a"}, ws, RuleSystem},
		{[]string{"cp", "--target-directory=/etc", "a"}, ws, RuleSystem},
		{[]string{"cp", "--target=/etc", "a"}, ws, RuleSystem}, // a GNU abbreviation
		{[]string{"mv", "/etc/passwd", "."}, ws, RuleSystem},
		{[]string{"ln", "-s", "target"}, ws, ""},
		{[]string{"ln", "-s", "/etc/passwd", "/etc/x"}, ws, RuleSystem},
		{[]string{"chmod", "-R", "755", "/usr"}, ws, RuleSystem},
		{[]string{"chmod", "--reference=a", "/etc/passwd"}, ws, RuleSystem},
		{[]string{"chown", "-h", "me", "/etc/x"}, ws, RuleSystem},
		{[]string{"sed", "-i", "-e", "s/a/b/", "/etc/hosts"}, ws, RuleSystem},
		{[]string{"sed", "-ibak", "s/a/b/", "/etc/hosts"}, ws, RuleSystem},
		{[]string{"sed", "s/a/b/", "/etc/hosts"}, ws, ""},
		{[]string{"tar", "xf", "a.tar", "-C", "/"}, ws, RuleRoot},
		{[]string{"tar", "-cf", "/etc/a.tar", "src"}, ws, RuleSystem},
		{[]string{"kill", "-1"}, ws, RuleKillAll}, // ambiguous: refused
		{[]string{"kill", "--", "-1"}, ws, RuleKillAll},
		{[]string{"kill", "-s", "KILL", "1"}, ws, RuleKillAll},
		{[]string{"timeout", "-k", "1", "5", "rm", "-rf", "/"}, ws, RuleRoot},
		{[]string{"env", "-C", "/", "rm", "-rf", "etc"}, ws, RuleRoot},
		{[]string{"env", "-S", "rm -rf /"}, ws, RuleRoot},
		{[]string{"flock", "/etc/lock", "true"}, ws, RuleSystem},
		{[]string{"flock", "l", "-c", "rm -rf /"}, ws, RuleRoot},
		{[]string{"strace", "-o", "/etc/x", "ls"}, ws, RuleSystem},
		{[]string{"xargs", "-I{}", "cp", "{}", "/etc"}, ws, RuleUnchecked},
		{[]string{"xargs", "echo"}, ws, ""},
		{[]string{"parallel", "rm", ":::", "a"}, ws, RuleUnchecked},
		{[]string{"bash", "-lc", "rm -rf /"}, ws, RuleRoot},
		{[]string{"bash", "-o", "pipefail", "-c", "rm -rf ~"}, ws, RuleHome},
		{[]string{"bash"}, ws, RuleUnchecked},
		{[]string{"sh", "-s"}, ws, RuleUnchecked},
		{[]string{"bash", "-c", "echo 'unterminated"}, ws, RuleUnchecked},
		{[]string{"busybox", "sh", "-c", "rm -rf $X"}, ws, RuleUnchecked},
		{[]string{"find", ".", "-fprint", "/etc/x"}, ws, RuleSystem},
		{[]string{"find", "/etc", "-name", "x"}, ws, ""},
		{[]string{"docker", "run", "--mount", "type=bind,source=/etc,target=/e", "x"}, ws, RuleSystem},
		{[]string{"docker", "run", "-v", "data:/data", "x"}, ws, ""},
		{[]string{"curl", "--output", "/etc/x", "u"}, ws, RuleSystem},
		{[]string{"wget", "-P", "/usr/share", "u"}, ws, RuleSystem},
		{[]string{"dd", "if=/dev/sda", "of=disk.img"}, ws, ""},
		{[]string{"dd", "of=/dev/nvme0n1"}, ws, RuleDisk},
		{[]string{"truncate", "-s", "0", "/dev/sda"}, ws, RuleDevice},
		{[]string{"touch", "/dev/null"}, ws, ""},
		{[]string{"cd", "/"}, ws, RuleRoot},
		{[]string{"cd"}, ws, RuleHome},
		{[]string{"cd", "src"}, ws, ""},
		{[]string{"systemctl", "reboot"}, ws, RulePower},
		{[]string{"sysctl", "-w", "vm.swappiness=1"}, ws, RuleDisk},
		{[]string{"/usr/sbin/mkfs.xfs", "/dev/sdb"}, ws, RuleDisk},
		{[]string{"Sudo", "ls"}, ws, RulePrivilege},
		{[]string{"tmux", "new", "-d"}, ws, RuleDetach},
		{[]string{"at", "now"}, ws, RuleDetach},
		{[]string{"batch"}, ws, RuleDetach},
		{[]string{"incrontab", "table"}, ws, RuleDetach},
		{[]string{"crontab", "-"}, ws, RuleDetach},
		// Daemons that would do the work outside the sandbox.
		{[]string{"docker", "run", "--device", "/dev/sda", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--device=/dev/kvm", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--cap-add", "SYS_ADMIN", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--cap-add=ALL", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--security-opt", "apparmor=unconfined", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--security-opt=seccomp=unconfined", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--security-opt", "no-new-privileges:true", "alpine"}, ws, ""},
		{[]string{"docker", "run", "--pid", "host", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--network=host", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--net", "host", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--network", "bridge", "alpine"}, ws, ""},
		{[]string{"docker", "run", "--uts=host", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--privileged=true", "alpine"}, ws, RulePrivilege},
		{[]string{"docker", "run", "--volumes-from", "c", "alpine"}, ws, RuleUnchecked},
		{[]string{"docker", "run", "--mount", "type=volume,dst=/x,volume-opt=device=/etc,volume-opt=o=bind", "alpine"}, ws, RuleUnchecked},
		{[]string{"docker", "volume", "create", "--opt", "device=/etc", "--opt", "o=bind", "etc"}, ws, RuleUnchecked},
		{[]string{"docker", "volume", "create", "-o", "o=bind", "etc"}, ws, RuleUnchecked},
		{[]string{"docker", "compose", "-f", "compose.yml", "up"}, ws, RuleUnchecked},
		{[]string{"docker", "--context", "x", "compose", "--project-name", "p", "run", "web"}, ws, RuleUnchecked},
		{[]string{"docker", "compose", "ps"}, ws, ""},
		{[]string{"docker-compose", "up", "-d"}, ws, RuleUnchecked},
		{[]string{"podman-compose", "start"}, ws, RuleUnchecked},
		{[]string{"podman", "compose", "up"}, ws, RuleUnchecked},
		{[]string{"nerdctl", "compose", "up"}, ws, RuleUnchecked},
		{[]string{"docker", "compose", "build"}, ws, RuleUnchecked},
		{[]string{"docker", "stack", "deploy", "-c", "s.yml", "app"}, ws, RuleUnchecked},
		{[]string{"podman", "kube", "play", "pod.yaml"}, ws, RuleUnchecked},
		{[]string{"podman", "play", "kube", "pod.yaml"}, ws, RuleUnchecked},
		{[]string{"docker", "plugin", "install", "evil/plugin"}, ws, RulePrivilege},
		{[]string{"docker", "buildx", "build", "--allow", "security.insecure", "."}, ws, RulePrivilege},
		{[]string{"docker", "cp", "web:/etc/passwd", "/etc/passwd"}, ws, RuleSystem},
		{[]string{"docker", "container", "cp", "web:/x", "/usr/bin/x"}, ws, RuleSystem},
		{[]string{"podman", "run", "--device", "/dev/sda", "alpine"}, ws, RulePrivilege},
		{[]string{"podman", "unshare", "rm", "-rf", "/"}, ws, RuleRoot},
		{[]string{"env", "docker", "run", "--privileged", "alpine"}, ws, RulePrivilege},
		{[]string{"systemctl", "--user", "link", "./evil.service"}, ws, RuleDaemon},
		{[]string{"systemctl", "--user", "enable", "--now", "evil.service"}, ws, RuleDaemon},
		{[]string{"systemctl", "--user", "start", "evil.service"}, ws, RuleDaemon},
		{[]string{"systemctl", "--user", "edit", "--full", "evil.service"}, ws, RuleDaemon},
		{[]string{"systemctl", "--user", "set-environment", "LD_PRELOAD=/x.so"}, ws, RuleDaemon},
		{[]string{"systemctl", "--user", "import-environment"}, ws, RuleDaemon},
		{[]string{"systemctl", "-M", "x", "restart", "nginx"}, ws, RuleDaemon},
		{[]string{"systemctl", "--user", "-p", "MainPID", "show", "x"}, ws, ""},
		{[]string{"systemctl", "--user", "is-enabled", "x"}, ws, ""},
		{[]string{"loginctl", "enable-linger"}, ws, RuleDaemon},
		{[]string{"loginctl", "user-status"}, ws, ""},
		{[]string{"service", "ssh", "start"}, ws, RuleDaemon},
		{[]string{"busctl", "--user", "call", "org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager", "StartUnit", "ss", "x.service", "fail"}, ws, RuleUnchecked},
		{[]string{"busctl", "set-property", "a", "/b", "c", "d", "s", "e"}, ws, RuleUnchecked},
		{[]string{"busctl", "introspect", "org.freedesktop.systemd1", "/org/freedesktop/systemd1"}, ws, ""},
		{[]string{"gdbus", "call", "--session", "--dest", "org.freedesktop.systemd1", "--object-path", "/org/freedesktop/systemd1", "--method", "org.freedesktop.systemd1.Manager.StartUnit", "x", "fail"}, ws, RuleUnchecked},
		{[]string{"gdbus", "introspect", "--session", "--dest", "org.foo", "--object-path", "/"}, ws, ""},
		{[]string{"dbus-send", "--session", "--dest=org.freedesktop.systemd1", "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager.StartUnit"}, ws, RuleUnchecked},
		{[]string{"dbus-update-activation-environment", "LD_PRELOAD=/x.so"}, ws, RuleUnchecked},
		{[]string{"qdbus", "org.kde.klauncher", "/KLauncher", "exec_blind", "sh"}, ws, RuleUnchecked},
		{[]string{"qdbus", "org.kde.klauncher"}, ws, ""},
		{[]string{"rm", "-rf", "a\x00b"}, ws, RuleOutside},
		{[]string{"ln", "/etc/passwd", "p"}, ws, RuleSystem}, // a hard link: writes would reach it
		{[]string{"ln", "../.bashrc"}, ws, RuleHome},
		{[]string{"ln", "-s", "../.bashrc"}, ws, ""},
		{[]string{"cp", "-al", "/etc", "e"}, ws, RuleSystem},
		{[]string{"link", "/etc/hosts", "h"}, ws, RuleSystem},
		{[]string{"kill", "-9", strconv.Itoa(os.Getpid())}, ws, RuleKillAll},
	} {
		err := p.Check(tc.argv, tc.dir)
		got := ""
		if r, ok := err.(*Refusal); ok {
			got = r.Rule
		} else if err != nil {
			t.Errorf("%q: not a *Refusal: %v", tc.argv, err)
		}
		if got != tc.rule {
			t.Errorf("%q in %q: rule %q, want %q (%v)", tc.argv, tc.dir, got, tc.rule, err)
		}
	}
}

func TestPolicyWorkspaceInsideASystemDirectory(t *testing.T) {
	// /srv/app or /var/www/site: the workspace is writable, its
	// neighbours are not.
	p := &Policy{Workspace: "/srv/app", FSRoot: "/", Home: "/home/u"}
	for _, tc := range []struct {
		argv []string
		ok   bool
	}{
		{[]string{"rm", "-rf", "/srv/app/build"}, true},
		{[]string{"rm", "-rf", "/srv/other"}, false},
		{[]string{"rm", "-rf", "/srv"}, false},
		{[]string{"rm", "-rf", "/srv/app"}, false},
	} {
		if err := p.Check(tc.argv, "/srv/app"); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.argv, err)
		}
	}
	// A workspace at / still protects the system.
	p = &Policy{Workspace: "/", FSRoot: "/", Home: "/home/u"}
	for _, argv := range [][]string{{"rm", "-rf", "/etc"}, {"rm", "-rf", "/"}, {"rm", "-rf", "/home/u"}, {"touch", "/usr/x"}} {
		if err := p.Check(argv, "/"); err == nil {
			t.Errorf("%q allowed with the workspace at /", argv)
		}
	}
}

func TestForkBombs(t *testing.T) {
	p, ws := testPolicy(t)
	for _, src := range []string{
		":(){ :|:& };:", ":(){ :|: & }; :", "f(){ f|f& }; f", "function f { f | f & }; f",
		"f(){ f & f; }; f", "a(){ b|b; }; b(){ a& }; a", "f(){ (f &); f; }", "f(){ echo $(f | f &); }",
	} {
		err := p.CheckScript(src, ws)
		if r, ok := err.(*Refusal); !ok || r.Rule != RuleForkBomb {
			t.Errorf("%s: %v", src, err)
		}
	}
	for _, src := range []string{
		"f(){ echo hi; }; f | f", "f(){ g & }; g(){ echo; }; f", "fib(){ [ $1 -lt 2 ] && echo 1 || fib $(( $1 - 1 )); }; fib 5",
	} {
		if err := p.CheckScript(src, ws); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

func TestIsSecret(t *testing.T) {
	for _, name := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "AWS_ACCESS_KEY_ID",
		"AWS_SECRET_ACCESS_KEY", "MY_APP_SECRET", "DB_PASSWORD", "HEARTH_API_TOKEN", "HF_TOKEN", "STRIPE_KEY",
		"SLACK_BOT_TOKEN", "client_secret", "GOOGLE_APPLICATION_CREDENTIALS", "MYSQL_PWD", "NPM_TOKEN"} {
		if !IsSecret(name, "x") {
			t.Errorf("%s is not seen as a secret", name)
		}
	}
	for _, kv := range [][2]string{{"PATH", "/usr/bin"}, {"HOME", "/home/u"}, {"PWD", "/w"}, {"OLDPWD", "/"}, {"LANG", "C"},
		{"GOPATH", "/go"}, {"TERM", "xterm"}, {"EDITOR", "vi"}, {"SSH_AUTH_SOCK", "/run/ssh"}, {"KEYBOARD", "us"}} {
		if IsSecret(kv[0], kv[1]) {
			t.Errorf("%s is seen as a secret", kv[0])
		}
	}
	for _, v := range []string{"sk-proj-abc", "ghp_abcdef", "https://user:pass@example.com/x", "AKIAABCDEFGHIJKLMNOP", "xoxb-1-2"} {
		if !IsSecret("INNOCENT_NAME", v) {
			t.Errorf("the value %q is not seen as a secret", v)
		}
	}
	kept, removed := ScrubEnv([]string{"A=1", "GITHUB_TOKEN=x", "NO_EQUALS", "OPENAI_API_KEY=y"}, []string{"OPENAI_API_KEY"})
	if strings.Join(kept, ",") != "A=1,OPENAI_API_KEY=y" || strings.Join(removed, ",") != "GITHUB_TOKEN" {
		t.Errorf("kept %q removed %q", kept, removed)
	}
}

func TestOutputBuffer(t *testing.T) {
	var progress strings.Builder
	stopped := 0
	o := newOutput(10, 100, func(s string) {
		if !utf8.ValidString(s) {
			t.Errorf("progress got invalid UTF-8 %q", s)
		}
		progress.WriteString(s)
	}, func() { stopped++ })
	// "é" is two bytes: split across writes, it must reach progress whole.
	for _, chunk := range []string{"a", "\xc3", "\xa9", "bcdefghij", "klmnopqrstuvwxyz"} {
		o.Write([]byte(chunk))
	}
	text, total, dropped := o.close()
	if total != 28 || dropped != 18 {
		t.Errorf("total %d dropped %d", total, dropped)
	}
	if !strings.HasPrefix(text, "aébc") || !strings.HasSuffix(text, "vwxyz") || !strings.Contains(text, "18 bytes of output dropped") {
		t.Errorf("text %q", text)
	}
	if !strings.HasPrefix(progress.String(), "aébc") {
		t.Errorf("progress %q", progress.String())
	}
	o.Write(make([]byte, 200))
	if stopped != 0 {
		t.Error("a closed output stopped the command")
	}
	o = newOutput(10, 100, nil, func() { stopped++ })
	o.Write(make([]byte, 150))
	o.Write(make([]byte, 150))
	if stopped != 1 {
		t.Errorf("onLimit called %d times", stopped)
	}
}
