#!/bin/sh
# /validate's container check (the supervisor's docker.validate), with no registry and no
# internet: the first call imports a one-layer image made of the bundled mvr (its own glibc and
# loader, so nothing else is needed inside), then runs `mvr version` in it with no network.
set -eu
bundle="${MVR_BUNDLE:-/opt/mvr}"
image=mvr-validate:local
if ! docker image inspect "$image" >/dev/null 2>&1; then
  tar -C "$bundle" -c lib | docker import - "$image" >/dev/null
fi
exec docker run --rm --network none --entrypoint /lib/ld-linux-aarch64.so.1 "$image" \
  --library-path /lib /lib/mvr.bin version
