#!/usr/bin/env bash
# faults.sh power-cut [--cycles N] [--seed S] [--durability none]: power cuts under the real
# server (tests/pytest/power_cut.py): `fdyno serve` on its default durability with its files
# going through the power-loss file system, every write operation sent over HTTP, the power cut
# at every stage of the engine's life (log append, flush, compaction, log deletion, MANIFEST,
# recovery) with unsynced tails dropped, torn, zeroed or garbled, and every acknowledged write,
# index, item count, stream record and resent token checked against a model after each cut.
# It prints its result last, on one line, and exits non-zero on any loss or mismatch.
#
# The server is $FDYNO_BIN, else build-release/src/main/fdyno, built (Release) when missing.
# Cycles: 200 with FDYNO_FULL=1, else 10. `--durability none` is the control: it must lose
# writes. docs/testing.md says what each claim's test is.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: faults.sh power-cut [--cycles N] [--seed S] [--durability none]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
command=$1
shift
case "$command" in
  power-cut)
    bin=${FDYNO_BIN:-$root/build-release/src/main/fdyno}
    if [ ! -x "$bin" ]; then
      "$root/scripts/setup.sh" all
      "$root/scripts/build.sh" "$root/build-release" -DCMAKE_BUILD_TYPE=Release -DFDYNO_TESTS=OFF
      bin=$root/build-release/src/main/fdyno
    fi
    FDYNO_BIN=$bin exec /usr/bin/python3 "$root/tests/pytest/power_cut.py" "$@"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
