#!/usr/bin/env bash
# Runs the README's commands on a fresh Debian 12 machine without a second machine: a pristine
# Debian 12 (bookworm) root built by mmdebstrap from Debian's own packages (variant minbase:
# only the Essential packages and apt), one fresh copy of it for each command, holding a clean
# clone of this repository's committed HEAD (never the working tree, its build trees or its
# uncommitted changes), entered with chroot as root with / a mount of its own, /proc (its own),
# /dev and /sys (bound from the host), an empty /run and the host's /etc/resolv.conf. Prints each command's output
# with the seconds since it started, then its wall time and exit status, and a summary table.
#
# Usage: bash scripts/fresh-machine.sh [--demo-only | --test-only] [--refresh] [-- CMD [ARG...]]
#   (no option)   bash scripts/demo.sh, then bash scripts/test.sh, each in its own fresh root
#   --demo-only   bash scripts/demo.sh only
#   --test-only   bash scripts/test.sh only
#   -- CMD ...    CMD instead, run from the clone's top folder (e.g. -- bash scripts/setup.sh deep)
#   --refresh     build the pristine root again instead of unpacking the cached one
# Needs root (mmdebstrap, chroot and mounts); installs Debian's mmdebstrap when it is missing.
#
# The root: built once and cached as a tarball, $MVR_FRESH_CACHE/bookworm.tar (default
# /var/cache/mvr/fresh-root), so a second run downloads nothing for it; each command gets its own
# unpacked copy under $MVR_FRESH_WORK (default /var/tmp), removed when the command ends. Its apt
# uses the same Debian mirrors as this machine (its sources' bookworm, bookworm-updates and
# bookworm-security entries) with the same Acquire options (Check-Valid-Until, proxies).
# The command runs with an empty environment but PATH, HOME=/root, LANG and TERM, so with a fresh,
# empty ccache (the root's /root/.cache/ccache) and none of this machine's settings.
# Isolation: the command runs in its own mount and PID namespaces (unshare), so its mounts are
# never seen outside and every process it left behind is killed when it ends; on any exit of this
# script (end, error, Ctrl-C, SIGTERM) the command's namespace is ended, any process still inside
# the root is killed by its id, and the unpacked root is removed. A policy-rc.d in the root keeps
# apt from starting services (docker.io's dockerd), as is usual in a chroot.
# Network: the root shares this machine's network. Inside it, only apt (scripts/setup.sh) talks
# to the Debian mirror, and for scripts/test.sh npm to the npm registry (the contract tests'
# pinned packages); the demo and the tests use only loopback.
#
# What differs from the host, and so which tests skip in the root (they run on the host instead):
#   - moto's server: the host has moto_server in /root/.pyenv, which is not a Debian package, so
#     every test that needs it skips in the root (ctest label `moto`, the SQS/DynamoDB/S3 backends
#     of the store and queue contract tests, tests/deploy's DeployOnMoto).
#   - no dockerd runs in the root (apt may not start it). The real-Docker tests start dockerds of
#     their own, as on a machine: the root is a bind mount of itself, so that dockerd's archive
#     extraction and `ip netns` can remount "/" (on a plain directory both fail with EINVAL).
#   - `setup.sh test` fetches no VM kernel and installs no QEMU or busybox: the `vm` tests, the
#     busybox cpio tests and the arm64 tests skip (scripts/test.sh builds the ARM64 supervisor and
#     installs its cross compiler itself).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${MVR_FRESH_CACHE:-/var/cache/mvr/fresh-root}"
WORK="${MVR_FRESH_WORK:-/var/tmp}"
SUITE=bookworm
TARBALL="$CACHE/$SUITE.tar"
LOGS="$CACHE/logs"
# Inside the root: the clone's place and the command's environment.
CLONE=/root/mvr
INNER_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# The help is this header comment.
usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
say() { echo "fresh-machine: $*"; }
die() {
  echo "fresh-machine: $*" >&2
  exit 1
}

# --- arguments -----------------------------------------------------------------------------
commands=()   # each the command's words, quoted for bash
refresh=false
mode=both
shown=""       # -- CMD as given, for the output
while [[ $# -gt 0 ]]; do
  case "$1" in
    --demo-only) mode=demo ;;
    --test-only) mode="test" ;;
    --refresh) refresh=true ;;
    -h | --help)
      usage
      exit 0
      ;;
    --)
      shift
      [[ $# -gt 0 ]] || die "-- needs a command"
      commands+=("$(printf '%q ' "$@")")
      shown="$*"
      break
      ;;
    *)
      echo "fresh-machine: unknown option '$1' (--help lists them)" >&2
      exit 2
      ;;
  esac
  shift
done
if [[ ${#commands[@]} -eq 0 ]]; then
  case "$mode" in
    demo) commands=("bash scripts/demo.sh") ;;
    test) commands=("bash scripts/test.sh") ;;
    both) commands=("bash scripts/demo.sh" "bash scripts/test.sh") ;;
  esac
fi

[[ $(id -u) -eq 0 ]] || die "run it as root: it builds a Debian root with mmdebstrap, mounts and chroots into it"
command -v git >/dev/null || die "needs git, to clone the repository's committed HEAD"
commit="$(git -C "$ROOT" rev-parse HEAD)"
if [[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ]]; then
  say "note: the working tree has uncommitted changes; the root gets the commit ${commit:0:12} only"
fi

# --- cleanup: on every exit path ------------------------------------------------------------
run_pid=""      # the unshare of the command running now (its namespaces die with it)
stamp_pid=""    # the process printing its output
root_dir=""     # the unpacked root of the command running now
fifo_dir=""

# Pids of processes whose root directory is inside the unpacked root: only ever ones this script
# started (the root is its own, fresh directory).
pids_in_root() {
  local dir="$1" p link
  for p in /proc/[0-9]*; do
    link="$(readlink "$p/root" 2>/dev/null)" || continue
    [[ "$link" == "$dir" || "$link" == "$dir"/* ]] && echo "${p#/proc/}"
  done
  return 0
}

# Mount points under the root that this machine's namespace can see (none: every mount is made in
# the command's own namespace; this is the belt to that brace).
mounts_in_root() {
  local dir="$1"
  awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

remove_root() {
  local dir="$1" pids m i
  [[ -n "$dir" && -d "$dir" ]] || return 0
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pids="$(pids_in_root "$dir")"
    [[ -z "$pids" ]] && break
    # shellcheck disable=SC2086  # one pid a word
    kill -KILL $pids 2>/dev/null || true
    sleep 0.5
    [[ $i -eq 10 ]] && echo "fresh-machine: processes still in $dir: $pids" >&2
  done
  while read -r m; do
    if [[ -n "$m" ]]; then umount -R -l "$m" 2>/dev/null || true; fi
  done < <(mounts_in_root "$dir")
  if [[ -n "$(mounts_in_root "$dir")" ]]; then
    echo "fresh-machine: $dir still has mounts; not removing it:" >&2
    mounts_in_root "$dir" >&2
    return 1
  fi
  rm -rf --one-file-system "$dir"
}

# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [[ -n "$run_pid" ]] && kill -0 "$run_pid" 2>/dev/null; then
    kill -TERM "$run_pid" 2>/dev/null || true
    sleep 1
    kill -KILL "$run_pid" 2>/dev/null || true
    wait "$run_pid" 2>/dev/null || true
  fi
  if [[ -n "$stamp_pid" ]]; then
    # A writer that opens and closes the pipe: the printer sees its end even when the command
    # never started (it would wait for a writer forever).
    if [[ -p "$fifo_dir/out" ]]; then
      exec 9<>"$fifo_dir/out"
      exec 9>&-
    fi
    wait "$stamp_pid" 2>/dev/null || true
  fi
  remove_root "$root_dir" || rc=1
  [[ -n "$fifo_dir" ]] && rm -rf "$fifo_dir"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# --- mmdebstrap and the mirrors -------------------------------------------------------------
if ! command -v mmdebstrap >/dev/null; then
  say "installing Debian's mmdebstrap"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null; }; then
    die "cannot install mmdebstrap (apt-get install mmdebstrap failed); refusing to go on"
  fi
  command -v mmdebstrap >/dev/null || die "mmdebstrap is still missing after installing it; refusing to go on"
fi

# This machine's Debian sources for the suite, as one-line "deb URI SUITE COMPONENTS" entries:
# from /etc/apt/sources.list and sources.list.d/*.list (one-line) and *.sources (deb822).
mirror_lines() {
  local files=()
  [[ -f /etc/apt/sources.list ]] && files+=(/etc/apt/sources.list)
  for f in /etc/apt/sources.list.d/*.list; do [[ -f "$f" ]] && files+=("$f"); done
  if [[ ${#files[@]} -gt 0 ]]; then
    sed -e 's/#.*//' -e 's/\[[^]]*\]//' "${files[@]}" |
      awk '$1 == "deb" && NF >= 4 { c = $4; for (i = 5; i <= NF; i++) c = c " " $i; print $2 "\t" $3 "\t" c }'
  fi
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    awk '
      function flush(   n, u, s, i, j, us, ss) {
        if (types ~ /(^| )deb( |$)/ && enabled != "no" && uris != "" && suites != "") {
          n = split(uris, us, " "); split(suites, ss, " ")
          for (i = 1; i <= n; i++) for (j in ss) print us[i] "\t" ss[j] "\t" comps
        }
        types = uris = suites = comps = enabled = ""
      }
      /^#/ { next }
      /^[ \t]*$/ { flush(); next }
      { key = tolower($1); sub(/:$/, "", key); $1 = ""; sub(/^ +/, "") }
      key == "types" { types = $0 } key == "uris" { uris = $0 } key == "suites" { suites = $0 }
      key == "components" { comps = $0 } key == "enabled" { enabled = tolower($0) }
      END { flush() }' "$f"
  done
}
mirrors=()
while IFS=$'\t' read -r uri suite comps; do
  case "$suite" in
    "$SUITE" | "$SUITE"-updates | "$SUITE"-security) mirrors+=("deb $uri $suite ${comps:-main}") ;;
  esac
done < <(mirror_lines | awk '!seen[$0]++')
[[ ${#mirrors[@]} -gt 0 ]] || die "no $SUITE entry in /etc/apt/sources.list{,.d/*}: which mirror should the root use?"

# The Acquire options this machine's apt runs with that decide whether the mirror answers
# (a snapshot mirror's old Release dates, a proxy), for the root's apt too.
aptopts=()
while read -r line; do
  aptopts+=(--aptopt="$line")
done < <(apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' || true)

# --- the pristine root ----------------------------------------------------------------------
mkdir -p "$CACHE" "$LOGS" "$WORK"
if [[ "$refresh" == true || ! -s "$TARBALL" ]]; then
  say "building a pristine Debian $SUITE root (mmdebstrap, minbase) from: ${mirrors[*]}"
  started=$SECONDS
  partial="$CACHE/$SUITE.partial.tar"
  rm -f "$partial"
  if ! mmdebstrap --variant=minbase --format=tar "${aptopts[@]}" \
    "$SUITE" "$partial" "${mirrors[@]}"; then
    rm -f "$partial"
    die "mmdebstrap failed to build the root"
  fi
  mv "$partial" "$TARBALL"
  say "root built in $((SECONDS - started)) s: $TARBALL ($(du -h "$TARBALL" | cut -f1))"
else
  say "pristine root: $TARBALL (cached; --refresh builds it again)"
fi

# --- one command in one fresh root ----------------------------------------------------------
# Prints each line with the seconds since the command started, to the terminal and the log.
stamp() {
  local log="$1" t0="${EPOCHREALTIME/./}" now line
  while IFS= read -r line || [[ -n "$line" ]]; do
    now="${EPOCHREALTIME/./}"
    printf '[%5d.%01ds] %s\n' $(((now - t0) / 1000000)) $((((now - t0) / 100000) % 10)) "$line"
  done | tee -a "$log"
}

# Runs in new mount and PID namespaces (unshare below): mounts what the root needs, then enters
# it. Its mounts exist only in that namespace and end with it.
# shellcheck disable=SC2016  # expanded by the inner bash
INNER='
set -e
root="$1"; shift
# The root is a mount of its own, as / is on a machine: what remounts "/" (the archive
# extraction of dockerd, the mount --make-rslave / of `ip netns`) fails on a plain directory.
mount --bind "$root" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs "$root/run"
mkdir -p "$root/run/lock"
exec chroot "$root" /usr/bin/env -i "$@"
'

names=()
statuses=()
walls=()
run_one() {
  local cmd="$1" index="$2" log started rc name="${shown:-$1}"
  log="$LOGS/$(date -u +%Y%m%dT%H%M%SZ)-$index.log"
  root_dir="$(mktemp -d "$WORK/mvr-fresh.XXXXXX")"
  say "[$index] unpacking a fresh root into $root_dir"
  tar --numeric-owner -xpf "$TARBALL" -C "$root_dir"
  cp -L /etc/resolv.conf "$root_dir/etc/resolv.conf"
  # The host's own certificate authorities (/usr/local/share/ca-certificates: e.g. a proxy that
  # the machine's HTTPS traffic to the npm registry passes through) go in as they would on a
  # machine so set up: the host's bundle beside the root's own, and npm told to read it, as the
  # host's npm is (a minbase root has no ca-certificates until apt brings it).
  if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null &&
    [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
    mkdir -p "$root_dir/etc/ssl"
    cp -L /etc/ssl/certs/ca-certificates.crt "$root_dir/etc/ssl/host-ca-certificates.crt"
    printf 'cafile=/etc/ssl/host-ca-certificates.crt\n' >"$root_dir/etc/npmrc"
  fi
  # As in any chroot: apt may install services but not start them (dockerd stays stopped).
  printf '#!/bin/sh\nexit 101\n' >"$root_dir/usr/sbin/policy-rc.d"
  chmod 755 "$root_dir/usr/sbin/policy-rc.d"
  git clone --quiet --no-hardlinks --no-checkout "$ROOT" "$root_dir$CLONE"
  git -C "$root_dir$CLONE" checkout --quiet --detach "$commit"
  git -C "$root_dir$CLONE" remote remove origin
  say "[$index] clean clone of ${commit:0:12} at $CLONE; running: $name"
  say "[$index] log: $log"

  fifo_dir="$(mktemp -d)"
  mkfifo "$fifo_dir/out"
  stamp "$log" <"$fifo_dir/out" &
  stamp_pid=$!
  started="${EPOCHREALTIME/./}"
  # bash stays the namespace's first process (it does not exec the command, a command follows),
  # so the command's own processes keep default signal handling and orphans are reaped.
  unshare --mount --pid --fork --kill-child --propagation private \
    bash -c "$INNER" inner "$root_dir" \
    PATH="$INNER_PATH" HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    /bin/bash -c "cd $CLONE && $cmd"'; exit $?' \
    </dev/null >"$fifo_dir/out" 2>&1 &
  run_pid=$!
  rc=0
  wait "$run_pid" || rc=$?
  run_pid=""
  local wall
  wall=$(((${EPOCHREALTIME/./} - started) / 100000))
  wait "$stamp_pid" || true
  stamp_pid=""
  rm -rf "$fifo_dir"
  fifo_dir=""
  remove_root "$root_dir"
  root_dir=""
  # The summary's name: the first line, at most 40 characters.
  name="${name%%$'\n'*}"
  [[ ${#name} -le 40 ]] || name="${name:0:37}..."
  names+=("$name")
  statuses+=("$rc")
  walls+=("$((wall / 10)).$((wall % 10))")
  say "[$index] $name: exit $rc after ${walls[-1]} s (wall)"
}

i=0
for cmd in "${commands[@]}"; do
  i=$((i + 1))
  run_one "$cmd" "$i"
done

echo
echo "fresh-machine: Debian $SUITE (minbase) + commit ${commit:0:12}, $(nproc) cores"
printf '%-40s %8s %10s\n' "command" "exit" "wall (s)"
overall=0
for j in "${!names[@]}"; do
  printf '%-40s %8s %10s\n' "${names[$j]}" "${statuses[$j]}" "${walls[$j]}"
  [[ "${statuses[$j]}" -eq 0 ]] || overall=1
done
exit "$overall"
