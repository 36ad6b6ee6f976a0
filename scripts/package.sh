#!/usr/bin/env bash
# package.sh [DIR]: builds the Debian package of fdyno (Release, stripped) in DIR
# (default build-package/) and prints its path and size; then writes the self-contained tarball
# fdyno-<version>-linux-x86_64.tar.gz there too (scripts/tarball.sh, from its own static tree)
# and prints its path and size: the package's line is the last but one, the tarball's the last.
# A DIR already configured as a Release tree is used as it is (scripts/test.sh packages the
# binary its black-box tests run; only the server is installed); a new DIR is configured
# without tests and benchmarks. Installs the build dependencies and packaging tools it needs
# (scripts/setup.sh package).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build-package}
"$root/scripts/setup.sh" package
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFDYNO_TESTS=OFF \
    -DFDYNO_BENCH=OFF -DFDYNO_WERROR=ON >/dev/null
fi
# The package installs under /usr; the prefix changes no object, so a tested tree rebuilds
# nothing. --version names the commit (cmake/build_commit.cmake, at every build).
cmake -S "$root" -B "$dir" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
if ! grep -qx 'CMAKE_BUILD_TYPE:STRING=Release' "$dir/CMakeCache.txt"; then
  echo "package.sh: $dir is not a Release tree" >&2
  exit 1
fi
cmake --build "$dir" -j "$(nproc)" --target fdyno
(cd "$dir" && cpack -G DEB >/dev/null)
deb=$(ls -t "$dir"/fdyno_*.deb | head -1)
echo "$deb ($(stat -c %s "$deb") bytes; binary $(dpkg-deb --fsys-tarfile "$deb" |
  tar -tvf - ./usr/bin/fdyno | awk '{print $3}') bytes)"
"$root/scripts/tarball.sh" "$dir"
