#!/bin/bash
# Fetches the guest kernel for `mvr emulate microvms --vm qemu` into DIR: the kernel of Debian's
# linux-image-cloud-amd64 (or -arm64) and the modules the guest's init loads (virtio, overlay
# for Docker's overlay2 driver, bridge and veth for its containers' network, dummy for the VPC
# resolver's address), taken with `apt-get download` and unpacked; nothing is installed
# on the host.
# For arm64 (`--vm-arch arm64`) DIR/root also holds the guest's own userland, which the host
# cannot lend it: arm64 busybox-static as bin/busybox, iproute2's ip as usr/bin/ip, and the
# libraries and loader ip needs, at their Debian paths. Adds the arm64 architecture to apt (as
# root) if it is missing.
# Usage: scripts/fetch-vm-kernel.sh [--check] [--arch amd64|arm64] [DIR]
#   DIR defaults to /var/cache/mvr/vm-kernel (amd64) or /var/cache/mvr/vm-kernel-arm64.
#   --check fetches nothing and prints nothing: exit 0 when DIR already holds the kernel, 1 if not
#   (scripts/setup.sh asks first, to say "already installed" in one line).
set -euo pipefail
arch=amd64
check=false
if [ "${1:-}" = "--check" ]; then
  check=true
  shift
fi
if [ "${1:-}" = "--arch" ]; then
  arch="${2:-}"
  shift 2
fi
case "$arch" in
  amd64) dir="${1:-/var/cache/mvr/vm-kernel}"; suffix="" ;;
  arm64) dir="${1:-/var/cache/mvr/vm-kernel-arm64}"; suffix=":arm64" ;;
  *) echo "vm kernel: --arch must be amd64 or arm64, not '$arch'" >&2; exit 2 ;;
esac
have() {
  [ -s "$dir/vmlinuz" ] && [ -s "$dir/modules/virtio_net.ko" ] && [ -s "$dir/modules/overlay.ko" ] &&
    [ -s "$dir/modules/bridge.ko" ] && [ -s "$dir/modules/veth.ko" ] && [ -s "$dir/modules/dummy.ko" ] &&
    { [ "$arch" = amd64 ] || { [ -s "$dir/root/bin/busybox" ] && [ -s "$dir/root/usr/bin/ip" ]; }; }
}
if [ "$check" = true ]; then
  have
  exit
fi
if have; then
  echo "vm kernel: already in $dir ($(cat "$dir/version" 2>/dev/null))"
  exit 0
fi
if [ "$arch" = arm64 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "vm kernel: apt does not know arm64 packages; as root: dpkg --add-architecture arm64 && apt-get update" >&2
    exit 1
  fi
  dpkg --add-architecture arm64
  apt-get update -qq
fi
# The meta package names the current kernel package: linux-image-<version>-cloud-<arch>.
package="$(apt-cache depends "linux-image-cloud-$arch$suffix" | awk '/Depends: linux-image-/ {print $2; exit}')"
package="${package%:arm64}"
if [ -z "$package" ]; then
  echo "vm kernel: apt knows no linux-image-cloud-$arch; run apt-get update" >&2
  exit 1
fi
packages=("$package$suffix")
if [ "$arch" = arm64 ]; then
  # busybox and ip, and every package whose library ip loads (checked below).
  for p in busybox-static iproute2 libc6 libbpf1 libelf1 libmnl0 libbsd0 libmd0 libcap2 zlib1g; do
    packages+=("$p:arm64")
  done
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"  # apt's sandbox user writes the download here
(cd "$tmp" && apt-get download -q "${packages[@]}" >download.log 2>&1) || {
  cat "$tmp/download.log" >&2
  exit 1
}
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done
version="${package#linux-image-}"
mods="$tmp/root/lib/modules/$version/kernel"
rm -rf "$dir.new"
mkdir -p "$dir.new/modules"
for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_legacy_dev \
         drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci net/core/failover \
         drivers/net/net_failover drivers/net/virtio_net drivers/block/virtio_blk \
         fs/overlayfs/overlay net/llc/llc net/802/stp net/bridge/bridge drivers/net/veth \
         drivers/net/dummy; do
  f="$mods/$m.ko"
  [ -f "$f" ] || f="$f.xz"
  [ -f "$f" ] || { echo "vm kernel: $package has no $m.ko" >&2; exit 1; }
  case "$f" in
    *.xz) xz -dc "$f" >"$dir.new/modules/$(basename "$m").ko" ;;
    *) cp "$f" "$dir.new/modules/" ;;
  esac
done
cp "$tmp/root/boot/vmlinuz-$version" "$dir.new/vmlinuz"
if [ "$arch" = arm64 ]; then
  guest="$dir.new/root"
  mkdir -p "$guest/bin" "$guest/usr/bin" "$guest/lib/aarch64-linux-gnu"
  cp "$tmp/root/bin/busybox" "$guest/bin/busybox"
  cp "$tmp/root/bin/ip" "$guest/usr/bin/ip"
  cp -L "$tmp/root/lib/ld-linux-aarch64.so.1" "$guest/lib/ld-linux-aarch64.so.1"
  # ip's libraries and theirs, by the names their ELF headers need.
  copy_needed() {
    local lib found d
    for lib in $(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      [ -e "$guest/lib/aarch64-linux-gnu/$lib" ] || [ "$lib" = ld-linux-aarch64.so.1 ] && continue
      found=""
      for d in lib/aarch64-linux-gnu usr/lib/aarch64-linux-gnu; do
        [ -e "$tmp/root/$d/$lib" ] && { found="$tmp/root/$d/$lib"; break; }
      done
      [ -n "$found" ] || { echo "vm kernel: no arm64 package fetched holds $lib (needed by $1)" >&2; exit 1; }
      cp -L "$found" "$guest/lib/aarch64-linux-gnu/$lib"
      copy_needed "$guest/lib/aarch64-linux-gnu/$lib"
    done
  }
  copy_needed "$guest/usr/bin/ip"
fi
echo "$version" >"$dir.new/version"
rm -rf "$dir"
mv "$dir.new" "$dir"
echo "vm kernel: $version in $dir"
