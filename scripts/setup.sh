#!/usr/bin/env bash
# Installs the Debian packages mvr needs to build and test. Idempotent: when everything is
# already installed it says so in one line and touches nothing.
set -euo pipefail

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

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#PACKAGES[@]} Debian packages already installed"
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
echo "setup: done"
