#!/usr/bin/env bash
# Builds the root filesystems of the two container images of seed 000's container test
# (tests/e2e/vm_containers_e2e_test.cpp), offline, from this machine's Debian packages: a Node.js
# root (the `node` of the `nodejs` package, the closest here to the seed's node:24) and a Redis
# root (redis-tools' server binary under the name Debian's redis-server package gives it, a
# symlink `redis-server -> redis-check-rdb`, and redis-cli), each with the shared libraries ldd
# names, as tarballs that `docker import` takes. Nothing is fetched.
#
#   bash tests/e2e/container_roots.sh OUT_DIR
#
# Writes OUT_DIR/node-root.tar and OUT_DIR/redis-root.tar. The tarballs are reproducible (sorted,
# owned by root, dated at the epoch), so an unchanged root is the same layer digest; they are
# written again only when a program they hold is newer than they are.
set -euo pipefail

if [[ $# -ne 1 || -z "$1" ]]; then
  echo "usage: bash tests/e2e/container_roots.sh OUT_DIR" >&2
  exit 2
fi
out="$1"

need() {
  local path="$1" package="$2"
  if [[ ! -x "$path" ]]; then
    echo "container_roots: $path is missing; install the Debian package $package" \
      "(scripts/setup.sh deep does)" >&2
    exit 1
  fi
}
need "$(command -v node || echo /usr/bin/node)" nodejs
need /usr/bin/redis-check-rdb redis-tools
need /usr/bin/redis-cli redis-tools
node_bin="$(readlink -f "$(command -v node)")"

# Copies each program and every library ldd names for it into root $1, at their own paths.
copy_with_libraries() {
  local root="$1"
  shift
  local program lib
  for program in "$@"; do
    install -D -m 0755 "$program" "$root$program"
    while read -r lib; do
      [[ -f "$lib" ]] || continue
      install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
    done < <(ldd "$program" | grep -oE '/[^ ]+' || true)
  done
}

# Writes root $1 as the tarball $2 (through a temporary file, so a failed run leaves none).
write_tar() {
  local root="$1" tarball="$2"
  mkdir -p "$root/tmp" "$root/etc" "$root/data"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/bin/false\n' >"$root/etc/passwd"
  printf 'root:x:0:\n' >"$root/etc/group"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$root" -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
}

# Whether tarball $1 exists and is newer than each of the programs after it.
fresh() {
  local tarball="$1" program
  shift
  [[ -f "$tarball" ]] || return 1
  for program in "$@"; do
    [[ "$tarball" -nt "$program" ]] || return 1
  done
}

mkdir -p "$out"
work="$(mktemp -d "$out/.roots-XXXXXX")"
trap 'rm -rf "$work"' EXIT

if ! fresh "$out/node-root.tar" "$node_bin"; then
  copy_with_libraries "$work/node" "$node_bin"
  [[ "$node_bin" == /usr/bin/node ]] || ln -s "$node_bin" "$work/node/usr/bin/node"
  write_tar "$work/node" "$out/node-root.tar"
fi
if ! fresh "$out/redis-root.tar" /usr/bin/redis-check-rdb /usr/bin/redis-cli; then
  copy_with_libraries "$work/redis" /usr/bin/redis-check-rdb /usr/bin/redis-cli
  ln -s redis-check-rdb "$work/redis/usr/bin/redis-server"
  write_tar "$work/redis" "$out/redis-root.tar"
fi
ls -l "$out/node-root.tar" "$out/redis-root.tar"
