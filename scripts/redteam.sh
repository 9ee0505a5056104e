#!/usr/bin/env bash
# Run the red-team suite (./redteam) against the real hearth binary: as the
# current user, and, when run as root, also as an unprivileged user
# (created if missing), so that both the root and the non-root paths of
# the sandbox are tested.
#
#   scripts/redteam.sh                 # root: both; otherwise: this user
#   REDTEAM_AS=user scripts/redteam.sh # root: only the unprivileged run
#   REDTEAM_AS=root scripts/redteam.sh # root: only the root run
#   REDTEAM_RUN='^git/' scripts/redteam.sh   # only some attacks (a regexp)
#   REDTEAM_REPORT=1 scripts/redteam.sh      # log what escapes, do not fail
#   HEARTH_REDTEAM_BIN=/path/hearth scripts/redteam.sh   # attack that binary
#
# The suite's own summary ends each run: counts per class and per outcome
# (escape, planted, exfiltrated, leak, hang, crash, terminal, memory), and
# one line per attack that got through.
set -euo pipefail

cd "$(dirname "$0")/.."
root=$(go list -m -f '{{.Dir}}')
user=${REDTEAM_USER:-hearth-redteam}
parallel=${REDTEAM_PARALLEL:-8}
as=${REDTEAM_AS:-both}

work=$(mktemp -d /tmp/hearth-redteam.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

# Programs some attacks use (an attack whose program is missing is skipped,
# and counted as skipped): installed where this script may (root, Debian).
missing=()
for p in nc:netcat-openbsd socat:socat strace:strace gdb:gdb python3:python3 perl:perl gcc:gcc; do
	command -v "${p%%:*}" >/dev/null || missing+=("${p#*:}")
done
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "redteam: installing ${missing[*]} (apt-get)"
	install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}")
	"${install[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && "${install[@]}" >/dev/null 2>&1; } ||
		echo "redteam: could not install ${missing[*]}: the attacks that need them are skipped"
fi

echo "redteam: building hearth and the suite"
if [ -n "${HEARTH_REDTEAM_BIN:-}" ]; then
	cp "$HEARTH_REDTEAM_BIN" "$work/hearth" # a given binary (e.g. built from another tree)
else
	go build -o "$work/hearth" ./cmd/hearth
fi
go test -c -o "$work/redteam.test" ./redteam/
mkdir -p "$work/redteam"
if [ -d redteam/testdata ]; then cp -r redteam/testdata "$work/redteam/"; fi
chmod -R a+rX "$work"

# A standard PATH: the unprivileged user cannot use root's own tool
# directories (pyenv shims under /root, for instance).
std_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

args=(-test.count=1 -test.parallel "$parallel" -test.timeout 30m ${REDTEAM_VERBOSE:+-test.v})
if [ -n "${REDTEAM_RUN:-}" ]; then
	export HEARTH_REDTEAM_RUN="$REDTEAM_RUN"
fi
if [ -n "${REDTEAM_REPORT:-}" ]; then
	export HEARTH_REDTEAM_REPORT=1
fi
export HEARTH_REDTEAM_BIN="$work/hearth"

status=0
run_as_self() {
	echo "redteam: as $(id -un) (uid $(id -u))"
	(cd "$work/redteam" && "$work/redteam.test" "${args[@]}") || status=1
}

run_as_user() {
	if ! id "$user" >/dev/null 2>&1; then
		echo "redteam: creating the unprivileged user $user"
		useradd --system --create-home --home-dir "/var/lib/$user" --shell /usr/sbin/nologin "$user"
	fi
	local home
	home=$(getent passwd "$user" | cut -d: -f6)
	echo "redteam: as $user (uid $(id -u "$user"))"
	local envs=(HOME="$home" USER="$user" LOGNAME="$user" PATH="$std_path" TMPDIR=/tmp
		HEARTH_REDTEAM_BIN="$work/hearth")
	[ -n "${HEARTH_REDTEAM_RUN:-}" ] && envs+=(HEARTH_REDTEAM_RUN="$HEARTH_REDTEAM_RUN")
	[ -n "${HEARTH_REDTEAM_REPORT:-}" ] && envs+=(HEARTH_REDTEAM_REPORT=1)
	if command -v runuser >/dev/null; then
		(cd "$work/redteam" && runuser -u "$user" -- env -i "${envs[@]}" "$work/redteam.test" "${args[@]}") || status=1
	else
		(cd "$work/redteam" && setpriv --reuid="$user" --regid="$user" --init-groups --inh-caps=-all \
			env -i "${envs[@]}" "$work/redteam.test" "${args[@]}") || status=1
	fi
}

if [ "$(id -u)" = 0 ]; then
	case $as in
	both) run_as_self; run_as_user ;;
	root) run_as_self ;;
	user) run_as_user ;;
	*) echo "REDTEAM_AS=$as: want both, root or user" >&2; exit 2 ;;
	esac
else
	run_as_self
fi
exit $status
