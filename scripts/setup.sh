#!/usr/bin/env bash
# Installs what one purpose of mvr needs on Debian 12, and nothing more:
#
#   bash scripts/setup.sh demo   building the `mvr` target and running `mvr demo` (scripts/demo.sh):
#                                the compiler toolchain, CMake, Ninja, ccache, pkg-config, mold
#                                and the -dev libraries `mvr` links. `mvr demo` itself spawns only
#                                `mvr` and /bin/sh, which every Debian system has.
#   bash scripts/setup.sh test   the default test tier (scripts/test.sh): all of demo, plus the
#                                test frameworks, python3 with YAML, the AWS CLI, jq, shellcheck,
#                                chromium, docker.io, Node.js with npm and the pinned npm packages
#                                of the GitHub contract tests (`npm ci` in tests/contracts/github)
#   bash scripts/setup.sh deep   everything: all of test, plus QEMU (x86 and ARM system emulators,
#                                qemu-user-static, qemu-utils, busybox-static), the aarch64 cross
#                                compiler, clang for fuzzing, tcmalloc for sweeps, git for releases,
#                                and the guest kernels of `--vm qemu` (scripts/fetch-vm-kernel.sh)
#   bash scripts/setup.sh        the same as `test` (what it did before it took a purpose)
#
# The Debian packages are listed in scripts/packages.d/, one a line with a comment saying why:
# a file's name starts with the purpose it serves (demo-*.txt, test-*.txt, deep-*.txt), and a
# purpose installs the files of its own and of every purpose before it (demo < test < deep).
# Add a package to the file of the least purpose that needs it.
#
# Idempotent: when nothing is missing it says so in one line and touches nothing. Installs run
# `apt-get update` first; they need root, or sudo.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PURPOSES=(demo test deep)

usage() {
  echo "usage: bash scripts/setup.sh [demo|test|deep]   (default: test; see the top of this file)"
}

purpose="${1:-test}"
case "$purpose" in
  demo | test | deep) ;;
  -h | --help)
    usage
    exit 0
    ;;
  *)
    echo "setup: unknown purpose '$purpose': the purposes are ${PURPOSES[*]}" >&2
    usage >&2
    exit 2
    ;;
esac
if [[ $# -gt 1 ]]; then
  usage >&2
  exit 2
fi

# The purposes up to and including this one, in order.
tiers=()
for p in "${PURPOSES[@]}"; do
  tiers+=("$p")
  [[ "$p" == "$purpose" ]] && break
done
includes() { [[ " ${tiers[*]} " == *" $1 "* ]]; }

PACKAGES=()
for tier in "${tiers[@]}"; do
  for file in "$ROOT"/scripts/packages.d/"$tier"-*.txt; do
    [[ -f "$file" ]] || continue
    while read -r pkg; do
      [[ -n "$pkg" && "$pkg" != \#* ]] && PACKAGES+=("$pkg")
    done <"$file"
  done
done
# One package may serve several parts (python3, awscli): install it once.
mapfile -t PACKAGES < <(printf '%s\n' "${PACKAGES[@]}" | awk '!seen[$0]++')

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
# The GitHub contract tests' validator runs on Node.js. A fresh Debian 12 has none: Debian's own
# (18) comes with the other packages. A machine whose Node.js came from elsewhere has its npm, and
# is left alone.
if includes test && ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi

# The npm packages, installed exactly as package-lock.json pins them; a stamp of the lock file's
# hash tells "already installed" without asking the registry.
NPM_DIR="$ROOT/tests/contracts/github"
NPM_STAMP="$NPM_DIR/node_modules/.mvr-lock-sha256"
npm_wanted() { sha256sum "$NPM_DIR/package-lock.json" | cut -d' ' -f1; }
npm_installed() { [[ -f "$NPM_STAMP" && "$(cat "$NPM_STAMP")" == "$(npm_wanted)" ]]; }

# The guest kernels of `mvr emulate microvms --vm qemu` (the `vm` tests): unpacked from Debian's
# linux-image-cloud-amd64 and -arm64 (with the arm64 guests' busybox and ip), never installed.
# Without them those tests skip and say why.
KERNEL_DIR="${MVR_VM_KERNEL_DIR:-/var/cache/mvr/vm-kernel}"
KERNEL_DIR_ARM64="${MVR_VM_KERNEL_DIR_ARM64:-/var/cache/mvr/vm-kernel-arm64}"
kernels_fetched() {
  "$ROOT/scripts/fetch-vm-kernel.sh" --check "$KERNEL_DIR" &&
    "$ROOT/scripts/fetch-vm-kernel.sh" --check --arch arm64 "$KERNEL_DIR_ARM64"
}

need_npm=false
need_kernels=false
if includes test && ! npm_installed; then need_npm=true; fi
if includes deep && ! kernels_fetched; then need_kernels=true; fi

if [[ ${#missing[@]} -eq 0 && "$need_npm" == false && "$need_kernels" == false ]]; then
  what="all ${#PACKAGES[@]} Debian packages"
  if includes deep; then
    what+=", the contract tests' npm packages and the VM kernels"
  elif includes test; then
    what+=" and the contract tests' npm packages"
  fi
  echo "setup ($purpose): $what already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]] && [[ ${#missing[@]} -gt 0 || "$need_kernels" == true ]]; then
  if ! command -v sudo >/dev/null; then
    echo "setup ($purpose): needs root to install, and there is no sudo: run it as root." >&2
    [[ ${#missing[@]} -gt 0 ]] && echo "setup ($purpose): missing: ${missing[*]}" >&2
    exit 1
  fi
  SUDO="sudo"
fi

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "setup ($purpose): installing ${#missing[@]} Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "$need_npm" == true ]]; then
  echo "setup ($purpose): installing the GitHub contract npm packages (npm ci in tests/contracts/github)"
  (cd "$NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  npm_wanted >"$NPM_STAMP"
fi

if [[ "$need_kernels" == true ]]; then
  if ! $SUDO "$ROOT/scripts/fetch-vm-kernel.sh" "$KERNEL_DIR"; then
    echo "setup ($purpose): could not fetch the guest kernel; the vm tests will skip" >&2
  fi
  if ! $SUDO "$ROOT/scripts/fetch-vm-kernel.sh" --arch arm64 "$KERNEL_DIR_ARM64"; then
    echo "setup ($purpose): could not fetch the arm64 guest kernel; the arm64 vm test will skip" >&2
  fi
fi
echo "setup ($purpose): done"
