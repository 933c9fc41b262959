#!/bin/sh
# Installs, with apt-get, what make fuzz needs beyond scripts/install-deps.sh:
# clang with its libFuzzer and sanitizer runtimes, and llvm-symbolizer for
# readable stack traces. Idempotent, like install-deps.sh.
set -eu

PACKAGES="
  clang
  libclang-rt-dev
  llvm
"

missing=""
for pkg in $PACKAGES; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  case "$status" in
    "install ok installed") ;;
    *) missing="$missing $pkg" ;;
  esac
done

if [ -z "$missing" ]; then
  exit 0
fi

echo "install-fuzz-deps: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
