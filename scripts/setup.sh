#!/usr/bin/env bash
# Installs the Debian 12 packages fdyno needs to build, test and benchmark. Idempotent: apt is
# only called when something is missing.
set -euo pipefail
packages=(
  cmake ninja-build ccache g++ clang libclang-rt-14-dev pkg-config clang-format
  librocksdb-dev libboost-dev libssl-dev zlib1g-dev rapidjson-dev libspdlog-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev libgoogle-perftools-dev valgrind
  python3-boto3 python3-pytest python3-requests
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
