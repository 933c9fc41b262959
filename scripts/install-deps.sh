#!/bin/sh
# Installs, with apt-get, the Debian packages hp-protocols needs to build,
# test and document itself. Idempotent: packages already present are left
# alone and apt-get runs only when something is missing.
set -eu

PACKAGES="
  build-essential
  meson
  ninja-build
  pkg-config
  libglib2.0-dev
  gobject-introspection
  libgirepository1.0-dev
  libjson-glib-dev
  libopenblas-dev
  libopenmpi-dev
  openmpi-bin
  valac
  gjs
  python3
  python3-gi
  python3-numpy
  python3-mpi4py
  python3-matplotlib
  python3-sentencepiece
  gi-docgen
  valgrind
  strace
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

echo "install-deps: installing$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing
