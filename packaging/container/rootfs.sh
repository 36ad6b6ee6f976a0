#!/usr/bin/env bash
# rootfs.sh TARBALL DIR: lays out the root filesystem of fdyno's container image (Dockerfile,
# beside this script) in DIR/rootfs from the release tarball (scripts/tarball.sh): the static
# binary at /usr/bin/fdyno, the data directory /data owned by the image's user (65532, named
# fdyno in /etc/passwd), and /tmp. Also writes DIR/rootfs.tar, those files with those owners
# and modes in one archive, built without root or a container engine. Prints DIR/rootfs.tar.
set -euo pipefail
tarball=$1
dir=$2
uid=65532
rm -rf "$dir/rootfs" "$dir/rootfs.tar"
mkdir -p "$dir/rootfs/usr/bin" "$dir/rootfs/data" "$dir/rootfs/tmp" "$dir/rootfs/etc"
tar -xzf "$tarball" -C "$dir/rootfs/usr/bin" --strip-components=1 --wildcards '*/fdyno'
chmod 0755 "$dir/rootfs/usr/bin/fdyno" "$dir/rootfs/data"
chmod 1777 "$dir/rootfs/tmp"
echo "fdyno:x:$uid:$uid:fdyno:/data:/sbin/nologin" > "$dir/rootfs/etc/passwd"
echo "fdyno:x:$uid:" > "$dir/rootfs/etc/group"
chmod 0644 "$dir/rootfs/etc/passwd" "$dir/rootfs/etc/group"
# Everything root's, then /data the user's (appended, so the archive needs no root to build).
tar -C "$dir/rootfs" --numeric-owner --owner=0 --group=0 --exclude=./data -cf "$dir/rootfs.tar" .
tar -C "$dir/rootfs" --numeric-owner --owner=$uid --group=$uid -rf "$dir/rootfs.tar" ./data
echo "$dir/rootfs.tar"
