#!/usr/bin/env bash
# tarball.sh OUTDIR: builds fdyno statically (-DFDYNO_STATIC=ON in build-static/, whose objects
# ccache shares with the Release tree: cmake/link_libraries.cmake) and writes
# OUTDIR/fdyno-<version>-linux-x86_64.tar.gz: the stripped binary, which needs nothing from the
# system but the kernel, its man page, README.md and LICENSE (the notices of what is linked in).
# Prints the tarball's path and size, and the binary's size (README.md, "Any Linux").
set -euo pipefail
# Only the result line goes to standard output (scripts/test.sh reads it); the rest to stderr.
exec 3>&1 1>&2
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
static=${FDYNO_STATIC_DIR:-$root/build-static}
"$root/scripts/setup.sh" package
export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
if [ ! -f "$static/build.ninja" ]; then
  cmake -S "$root" -B "$static" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFDYNO_TESTS=OFF \
    -DFDYNO_BENCH=OFF -DFDYNO_STATIC=ON -DFDYNO_WERROR=ON >/dev/null
fi
cmake --build "$static" -j "$(nproc)" --target fdyno
binary="$static/src/main/fdyno"
if ! file "$binary" | grep -q "statically linked"; then
  echo "tarball.sh: $binary is not statically linked" >&2
  exit 1
fi
version=$("$binary" --version | head -1 | awk '{print $2}')
name="fdyno-$version-linux-x86_64"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/$name"
strip -o "$stage/$name/fdyno" "$binary"
cp "$root/README.md" "$stage/$name/"
# The man page, from the commands' own help (help2man reads `fdyno serve --help`).
help2man --no-info --section 1 --name "a DynamoDB-compatible database server" \
  --help-option "serve --help" --version-string "$version" "$stage/$name/fdyno" \
  > "$stage/$name/fdyno.1"
# LICENSE: the copyright and license of each library linked into the binary, as Debian ships
# them (fdyno's own terms are not chosen yet: see the file's head).
{
  cat <<'HEAD'
fdyno, statically linked.

fdyno's own license has not been chosen yet; until it is, no license to fdyno's code is
granted by this file. The binary links the libraries below; each one's copyright and license
follow, as Debian 12 ships them (/usr/share/doc/<package>/copyright). glibc is under the LGPL
2.1: its object files and the means to relink the binary against another glibc are available
on request, as the LGPL asks of a statically linked program.
HEAD
  for pkg in libc6 libstdc++6 libgcc-s1 librocksdb7.8 libssl3 zlib1g libsnappy1v5 liblz4-1 \
             libzstd1 libbz2-1.0 libjemalloc2 libspdlog1.10 libfmt9 libboost1.74-dev; do
    printf '\n==== %s ====\n\n' "$pkg"
    cat "/usr/share/doc/$pkg/copyright"
  done
} > "$stage/$name/LICENSE"
tarball="$out/$name.tar.gz"
tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$tarball" "$name"
echo "$tarball ($(stat -c %s "$tarball") bytes; binary $(stat -c %s "$stage/$name/fdyno") bytes)" >&3
