#!/usr/bin/env bash
# Fetches GitHub's documented webhook example payloads (the npm package @octokit/webhooks-examples,
# from the octokit/webhooks schema project) into DIR, for tests/runnerset's octokit examples test.
# Usage: scripts/fetch-octokit-webhooks-examples.sh DIR
# Idempotent; never fails the build or the test run: when npm is missing or cannot reach the
# registry it says so and exits 0, and the tests that need the files skip with that reason.
# MVR_OCTOKIT_EXAMPLES_VERSION picks another version (default: the one the tests were written on).
set -euo pipefail
dir="${1:?usage: $0 DIR}"
version="${MVR_OCTOKIT_EXAMPLES_VERSION:-7.6.1}"
marker="$dir/package/api.github.com/index.json"
if [[ -f "$marker" && -f "$dir/version" && "$(cat "$dir/version")" == "$version" ]]; then
  echo "octokit examples: @octokit/webhooks-examples@$version already in $dir"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "octokit examples: npm is not installed; the example-payload tests will skip"
  exit 0
fi
mkdir -p "$(dirname "$dir")"
tmp="$(mktemp -d "$(dirname "$dir")/.octokit-examples.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
if ! (cd "$tmp" && npm pack --silent --fetch-retries=1 --fetch-timeout=30000 \
        "@octokit/webhooks-examples@$version" >pack.log 2>&1); then
  echo "octokit examples: npm could not fetch @octokit/webhooks-examples@$version:"
  tail -n 5 "$tmp/pack.log"
  echo "octokit examples: the example-payload tests will skip"
  exit 0
fi
# Unpack beside DIR and rename into place, so a reader never sees half a package.
mkdir -p "$tmp/out"
tar -xzf "$tmp"/octokit-webhooks-examples-*.tgz -C "$tmp/out"
echo "$version" >"$tmp/out/version"
rm -rf "$dir"
mv "$tmp/out" "$dir"
echo "octokit examples: @octokit/webhooks-examples@$version fetched into $dir"
