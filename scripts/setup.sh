#!/usr/bin/env bash
# Installs the Debian packages mvr needs to build and test, and the pinned npm packages of the
# GitHub contract tests (tests/contracts/github: GitHub's OpenAPI and webhooks descriptions and
# a JSON Schema validator, `npm ci` from the committed lock file). Idempotent: when everything
# is already installed it says so in one line each and touches nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"

# The npm packages, installed exactly as package-lock.json pins them; a stamp of the lock file's
# hash tells "already installed" without asking the registry.
install_npm_packages() {
  local dir="$ROOT/tests/contracts/github"
  local stamp="$dir/node_modules/.mvr-lock-sha256"
  local want
  want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "setup: GitHub contract npm packages already installed"
    return 0
  fi
  if ! command -v npm >/dev/null; then
    # A fresh Debian 12 has no Node.js: Debian's own (18) runs the validator. A machine whose
    # Node.js came from elsewhere has its npm, and is left alone.
    echo "setup: installing Debian's nodejs and npm for the GitHub contract tests"
    ${SUDO:-} apt-get update -qq
    DEBIAN_FRONTEND=noninteractive ${SUDO:-} apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  echo "setup: installing the GitHub contract npm packages (npm ci in tests/contracts/github)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$want" >"$stamp"
}

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git python3
  libcurl4-openssl-dev libssl-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libsqlite3-dev mold
  libgtest-dev libgmock-dev libbenchmark-dev librapidcheck-dev clang-format
  iproute2 procps psmisc unzip zip
)
# Extra packages a part of mvr may add (one per line) without editing this list.
if [[ -d "$(dirname "$0")/packages.d" ]]; then
  while read -r pkg; do
    [[ -n "$pkg" && "$pkg" != \#* ]] && PACKAGES+=("$pkg")
  done < <(cat "$(dirname "$0")"/packages.d/*.txt 2>/dev/null || true)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

# The guest kernels of `mvr emulate microvms --vm qemu` (the `vm` tests): unpacked from Debian's
# linux-image-cloud-amd64 and -arm64 (with the arm64 guests' busybox and ip), never installed.
# Without them those tests skip and say why.
fetch_vm_kernel() {
  if ! ${SUDO:-} "$(dirname "$0")/fetch-vm-kernel.sh" "${MVR_VM_KERNEL_DIR:-/var/cache/mvr/vm-kernel}"; then
    echo "setup: could not fetch the guest kernel; the vm tests will skip" >&2
  fi
  if ! ${SUDO:-} "$(dirname "$0")/fetch-vm-kernel.sh" --arch arm64 \
      "${MVR_VM_KERNEL_DIR_ARM64:-/var/cache/mvr/vm-kernel-arm64}"; then
    echo "setup: could not fetch the arm64 guest kernel; the arm64 vm test will skip" >&2
  fi
}

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#PACKAGES[@]} Debian packages already installed"
  install_npm_packages
  fetch_vm_kernel
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: run as root (or install sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_npm_packages
fetch_vm_kernel
echo "setup: done"
