#!/usr/bin/env bash
# action.yml's first step: finds the mvr binary the Action runs and writes `path=...` to
# GITHUB_OUTPUT. In order: the `mvr-path` input; a dist/mvr beside the action; the release this
# action's commit pins (release/VERSION and release/SHA256SUMS, files of the action itself, never
# fetched): downloaded for the runner's architecture, its SHA-256 checked against the pinned one,
# kept in the runner's tool cache (and hashed again before every later use); and only when no
# release matches the action's ref, a build from source (minutes; a notice says so). A download
# whose SHA-256 differs is refused, never run; a cached copy that differs is downloaded again.
#
# Environment (action.yml sets it): MVR_PATH, ACTION_PATH, ACTION_REF (github.action_ref),
# ACTION_REPOSITORY (github.action_repository), RELEASE_BASE_URL (the `release-base-url` input),
# and the runner's RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP, GITHUB_OUTPUT.
set -euo pipefail

output() { echo "path=$1" >>"$GITHUB_OUTPUT"; }
notice() { echo "::notice title=mvr::$*"; }
fail() { echo "::error title=mvr::$*"; exit 1; }

build_from_source() {
  notice "$1; building mvr from source instead (installs Debian packages and compiles: minutes)"
  bash "$ACTION_PATH/scripts/setup.sh" demo >&2
  bash "$ACTION_PATH/scripts/build.sh" "$ACTION_PATH/build" -DMVR_BUILD_TESTS=OFF \
    -DMVR_BUILD_BENCH=OFF >&2
  output "$ACTION_PATH/build/src/cli/mvr"
  exit 0
}

# The two inputs this step reads itself are checked before use, as mvr checks the others: a value
# with a line break would write a second line into GITHUB_OUTPUT. Values are never echoed.
check_input() { # NAME VALUE
  local name="$1" value="$2"
  (( ${#value} <= 4096 )) || fail "input '$name' is ${#value} bytes long, over its limit of 4096"
  printf '%s' "$value" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 ||
    fail "input '$name' is not valid UTF-8"
  [[ "$value" =~ [[:cntrl:]] ]] && fail "input '$name' holds a control character"
  return 0
}
LC_ALL=C check_input mvr-path "${MVR_PATH:-}"
LC_ALL=C check_input release-base-url "${RELEASE_BASE_URL:-}"
if [[ -n "${RELEASE_BASE_URL:-}" && ! "$RELEASE_BASE_URL" =~ ^https?://[^[:space:]]+$ ]]; then
  fail "input 'release-base-url' must be an http:// or https:// URL without spaces"
fi
if [[ -n "${MVR_PATH:-}" ]]; then
  [[ -f "$MVR_PATH" && -x "$MVR_PATH" ]] ||
    fail "input 'mvr-path' is not an executable file; give the path of an mvr binary, or leave it empty"
  output "$MVR_PATH"
  exit 0
fi
if [[ -x "$ACTION_PATH/dist/mvr" ]]; then output "$ACTION_PATH/dist/mvr"; exit 0; fi

os="${RUNNER_OS:-$(uname -s)}"
[[ "$os" == Linux ]] || fail "mvr runs on Linux runners only (this runner: $os)"
case "${RUNNER_ARCH:-$(uname -m)}" in
  X64 | x86_64) arch=x86_64 cache_arch=x64 ;;
  ARM64 | aarch64 | arm64) arch=arm64 cache_arch=arm64 ;;
  *) fail "no mvr build for this runner's architecture '${RUNNER_ARCH:-$(uname -m)}' (x86_64, arm64)" ;;
esac

pinned_version="$(cat "$ACTION_PATH/release/VERSION" 2>/dev/null || true)"
ref="${ACTION_REF:-}"
repository="${ACTION_REPOSITORY:-}"
# The runner leaves github.action_ref and github.action_repository empty in some composite-action
# contexts (actions/runner#2473); it always checks an action out to .../_actions/OWNER/REPO/REF.
if [[ -z "$ref" && "$ACTION_PATH" =~ /_actions/([^/]+)/([^/]+)/([^/]+)/?$ ]]; then
  repository="${repository:-${BASH_REMATCH[1]}/${BASH_REMATCH[2]}}"
  ref="${BASH_REMATCH[3]}"
fi
[[ -n "$pinned_version" ]] || build_from_source "this action's source pins no release"
# The ref matches when it is the pinned tag or a moving alias of it (v1 or v1.2 for v1.2.3).
if [[ "$ref" != "$pinned_version" && ! ( "$ref" =~ ^v[0-9]+(\.[0-9]+)?$ &&
      "$pinned_version" == "$ref".* ) ]]; then
  build_from_source "no release matches the action's ref '${ref:-(local)}' (this source pins $pinned_version)"
fi
asset="mvr-linux-$arch.tar.gz"
expected="$(awk -v f="$asset" '$2 == f || $2 == "*" f { print $1 }' \
  "$ACTION_PATH/release/SHA256SUMS" 2>/dev/null || true)"
[[ "$expected" =~ ^[0-9a-f]{64}$ ]] ||
  build_from_source "release $pinned_version pins no SHA-256 for $asset"

cache="${RUNNER_TOOL_CACHE:-$HOME/.cache/mvr-tools}/mvr/${pinned_version#v}"
launcher="$cache/$cache_arch/mvr-linux-$arch/mvr"
kept="$cache/$cache_arch.tar.gz" # the release file as downloaded and verified
tmp="$(mktemp -d "${RUNNER_TEMP:-/tmp}/mvr-download.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# Unpacks $tmp/$asset, whose SHA-256 is the pinned one, into the tool cache over what was there.
unpack_verified() { # SOURCE (named in an error)
  mkdir -p "$tmp/x" "$cache"
  tar -xzf "$tmp/$asset" -C "$tmp/x"
  [[ -x "$tmp/x/mvr-linux-$arch/mvr" ]] || fail "$1 has no mvr-linux-$arch/mvr"
  rm -rf "${cache:?}/$cache_arch"
  mv "$tmp/x" "$cache/$cache_arch"
}

# The tool cache outlives the job (on a self-hosted runner, every later job sees it), so the
# marker only says that an install once finished, not that the bytes there are still the pinned
# ones. Each use hashes a copy of the kept release file again and unpacks that copy afresh: what
# runs is what release/SHA256SUMS names, whatever was changed in the cache since.
if [[ -f "$kept" && "$(cat "$cache/$cache_arch.complete" 2>/dev/null)" == "$expected" ]]; then
  cp "$kept" "$tmp/$asset"
  actual="$(sha256sum "$tmp/$asset" | cut -d' ' -f1)"
  if [[ "$actual" == "$expected" ]]; then
    unpack_verified "$kept"
    echo "mvr $pinned_version ($arch) from the tool cache, SHA-256 checked again" >&2
    output "$launcher"
    exit 0
  fi
  echo "::warning title=mvr::the cached $kept has SHA-256 $actual, not the $expected this" \
    "action pins: it changed after it was verified. Downloading the release again; if this" \
    "repeats, find what writes into the runner's tool cache."
fi
rm -f "$cache/$cache_arch.complete"

base="${RELEASE_BASE_URL:-}"
if [[ -z "$base" ]]; then
  [[ -n "$repository" ]] || build_from_source "the action's repository is unknown"
  base="https://github.com/$repository/releases/download"
fi
url="${base%/}/$pinned_version/$asset"
echo "mvr $pinned_version ($arch): downloading $url" >&2
status="$(curl -sSL --retry 3 --retry-delay 2 -o "$tmp/$asset" -w '%{http_code}' "$url")" ||
  fail "could not download $url (curl exit $?); retry the job, or set mvr-path"
[[ "$status" == 404 ]] && build_from_source "$url does not exist (404)"
[[ "$status" == 200 ]] || fail "downloading $url answered HTTP $status; retry the job, or set mvr-path"
actual="$(sha256sum "$tmp/$asset" | cut -d' ' -f1)"
if [[ "$actual" != "$expected" ]]; then
  fail "refusing $url: its SHA-256 is $actual but this action pins $expected" \
    "(release/SHA256SUMS of $pinned_version). The release file was replaced or corrupted; do" \
    "not run it. Report it to the action's maintainers."
fi

unpack_verified "$url"
cp "$tmp/$asset" "$kept.partial"
mv "$kept.partial" "$kept"
echo "$expected" >"$cache/$cache_arch.complete"
echo "mvr $pinned_version ($arch): SHA-256 verified, cached in $cache/$cache_arch" >&2
output "$launcher"
