#!/usr/bin/env bash
# package.sh [DIR]: builds the Debian package of fdyno (Release, stripped) in DIR
# (default build-package/) and prints its path and size. Installs the build dependencies it
# needs (scripts/setup.sh serve) and dpkg-dev.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build-package}
"$root/scripts/setup.sh" serve
if ! dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "install ok installed"; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends dpkg-dev
fi
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null)" ]; then
  commit="$commit-dirty"
fi
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFDYNO_TESTS=OFF \
  -DFDYNO_BENCH=OFF -DFDYNO_WERROR=ON -DCMAKE_INSTALL_PREFIX=/usr -DFDYNO_COMMIT="$commit" \
  >/dev/null
cmake --build "$dir" -j "$(nproc)" --target fdyno
(cd "$dir" && cpack -G DEB >/dev/null)
deb=$(ls -t "$dir"/fdyno_*.deb | head -1)
echo "$deb ($(stat -c %s "$deb") bytes; binary $(dpkg-deb --fsys-tarfile "$deb" |
  tar -tvf - ./usr/bin/fdyno | awk '{print $3}') bytes)"
