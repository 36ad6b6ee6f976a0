#!/usr/bin/env bash
# console_browser.sh DIR: installs playwright-core (pinned; the last release that runs on Debian
# 12's Node.js 18) from npm into DIR, for the console's browser test
# (tests/pytest/test_console.py), and prints the node_modules directory to give it as
# FDYNO_PLAYWRIGHT. The browser is Debian's chromium (scripts/setup.sh); playwright-core brings
# none of its own. Idempotent.
set -euo pipefail
dir=$1
version=1.61.1
if ! grep -qs "\"version\": \"$version\"" "$dir/node_modules/playwright-core/package.json"; then
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-package-lock --no-save --no-audit --no-fund --silent \
    "playwright-core@$version" >&2
fi
echo "$dir/node_modules"
