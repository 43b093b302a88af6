#!/bin/bash
# Fetches the guest kernel for `mvr emulate microvms --vm qemu` into DIR (default
# /var/cache/mvr/vm-kernel): the kernel of Debian's linux-image-cloud-amd64 and the modules the
# guest's init loads (virtio, and overlay for Docker's overlay2 driver), taken with
# `apt-get download` and unpacked; nothing is installed on the host.
# Usage: scripts/fetch-vm-kernel.sh [DIR]
set -euo pipefail
dir="${1:-/var/cache/mvr/vm-kernel}"
if [ -s "$dir/vmlinuz" ] && [ -s "$dir/modules/virtio_net.ko" ] && [ -s "$dir/modules/overlay.ko" ]; then
  echo "vm kernel: already in $dir ($(cat "$dir/version" 2>/dev/null))"
  exit 0
fi
# The meta package names the current kernel package: linux-image-<version>-cloud-amd64.
package="$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')"
if [ -z "$package" ]; then
  echo "vm kernel: apt knows no linux-image-cloud-amd64; run apt-get update" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"  # apt's sandbox user writes the download here
(cd "$tmp" && apt-get download -q "$package" >download.log 2>&1) || {
  cat "$tmp/download.log" >&2
  exit 1
}
dpkg-deb -x "$tmp"/*.deb "$tmp/root"
version="${package#linux-image-}"
mods="$tmp/root/lib/modules/$version/kernel"
mkdir -p "$dir/modules"
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev \
         drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci net/core/failover \
         drivers/net/net_failover drivers/net/virtio_net drivers/block/virtio_blk \
         fs/overlayfs/overlay; do
  f="$mods/$m.ko"
  [ -f "$f" ] || f="$f.xz"
  [ -f "$f" ] || { echo "vm kernel: $package has no $m.ko" >&2; exit 1; }
  case "$f" in
    *.xz) xz -dc "$f" >"$dir/modules/$(basename "$m").ko" ;;
    *) cp "$f" "$dir/modules/" ;;
  esac
done
cp "$tmp/root/boot/vmlinuz-$version" "$dir/vmlinuz.new"
mv "$dir/vmlinuz.new" "$dir/vmlinuz"
echo "$version" >"$dir/version"
echo "vm kernel: $version in $dir"
