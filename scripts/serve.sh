#!/usr/bin/env bash
# serve.sh [fdyno serve flags...]: installs what is missing, builds, and starts `fdyno serve`
# on the embedded engine (data in ./fdyno-data unless --data-dir is given).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build"
exec "$root/build/src/main/fdyno" serve "$@"
