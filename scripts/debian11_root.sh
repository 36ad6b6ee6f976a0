#!/usr/bin/env bash
# debian11_root.sh DIR: a minimal Debian 11 (bullseye, glibc 2.31) root filesystem in DIR, made
# by debootstrap from Debian's archive unless DIR already holds one; prints DIR. The static
# binary's test runs the server inside it (tests/pytest/test_static_binary.py). Needs root (or
# sudo) and debootstrap (scripts/setup.sh).
set -euo pipefail
dir=$1
if [ -f "$dir/etc/debian_version" ] && grep -q '^11\.' "$dir/etc/debian_version"; then
  echo "$dir"
  exit 0
fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
$SUDO rm -rf "$dir"
$SUDO debootstrap --variant=minbase bullseye "$dir" http://deb.debian.org/debian >&2
echo "$dir"
