#!/usr/bin/env bash
# setup.sh [serve|all]: installs the Debian 12 packages fdyno needs. Idempotent: apt is only
# called when something is missing.
#   serve    what building and running the server needs: the compiler, CMake and the
#            libraries it links (scripts/serve.sh)
#   package  also what packaging needs: dpkg-dev, help2man, file (scripts/package.sh,
#            scripts/tarball.sh)
#   all    (default) also what the tests, benchmarks, fuzzers and packaging need
#          (scripts/test.sh)
set -euo pipefail
profile=${1:-all}
build=(
  cmake ninja-build g++ pkg-config
  lld librocksdb-dev libboost-dev libssl-dev zlib1g-dev rapidjson-dev libspdlog-dev libcli11-dev
  libjemalloc-dev libhnswlib-dev libexpat1-dev
)
tests=(
  ccache clang libclang-rt-14-dev llvm clang-format libgtest-dev libgmock-dev libbenchmark-dev
  valgrind python3-boto3 python3-botocore python3-pytest python3-pytest-xdist python3-requests
  prometheus libgoogle-perftools-dev awscli debootstrap chromium python3-matplotlib
)
packaging=(dpkg-dev help2man file)
case "$profile" in
  serve) packages=("${build[@]}") ;;
  package) packages=("${build[@]}" "${packaging[@]}") ;;
  all) packages=("${build[@]}" "${packaging[@]}" "${tests[@]}") ;;
  *) echo "setup.sh: unknown profile '$profile' (serve, package or all)" >&2; exit 2 ;;
esac
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The console's browser test drives chromium from Node.js (scripts/console_browser.sh): Debian's
# nodejs and npm, unless a Node.js with npm is already there (another vendor's nodejs package
# ships npm itself, and Debian's npm would conflict with it).
if [ "$profile" = all ] && ! command -v npm >/dev/null; then
  missing+=(nodejs npm)
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}"
fi
