#!/bin/sh
# test-install.sh: `meson install` into a temporary directory, then use
# what was installed as a user would, from outside the source tree
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-install.sh MESON BUILDDIR PYTHON CC
# (CC is the compiler command, which may have several words)
#
# Installs BUILDDIR with --destdir (nothing is rebuilt and nothing goes
# to the real prefix), checks that every file the build declares is
# there, builds and runs a C program with the installed .pc (a copy of
# it whose prefix is the temporary tree), runs a Python program that finds Hp
# only through GI_TYPELIB_PATH, LD_LIBRARY_PATH and PYTHONPATH, and runs
# the installed programs, and builds a Vala program by package name.
# Output is TAP.

set -eu

meson=$1
builddir=$2
python=$3
cc=$4
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hp-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root

count=0
failed=0
ok () {
  count=$((count + 1))
  echo "ok $count - $1"
}
not_ok () {
  count=$((count + 1))
  failed=$((failed + 1))
  echo "not ok $count - $1"
}
# check DESCRIPTION COMMAND...: one test point, the command's output
# shown as TAP comments
check () {
  what=$1
  shift
  if "$@" > "$tmp/out" 2>&1; then
    ok "$what"
  else
    not_ok "$what"
  fi
  sed 's/^/# /' "$tmp/out"
}

# One option of the build ("prefix", "libdir", ...), as an absolute path
option () {
  "$meson" introspect "$builddir" --buildoptions | "$python" -c '
import json, os, sys
options = {o["name"]: o["value"] for o in json.load(sys.stdin)}
value = options[sys.argv[1]]
print(value if sys.argv[1] == "prefix" else os.path.join(options["prefix"], value))' "$1"
}

check "meson install --destdir" "$meson" install -C "$builddir" --destdir "$dest" --no-rebuild --quiet

prefix=$(option prefix)
libdir=$dest$(option libdir)
includedir=$dest$(option includedir)/hp-protocols-1.0/hp-protocols
bindir=$dest$(option bindir)
datadir=$dest$(option datadir)

# Every file the install rules name, at its place under the destdir
"$meson" introspect "$builddir" --installed | "$python" -c '
import json, sys
for path in json.load(sys.stdin).values():
    print(path)' > "$tmp/installed"
missing=""
while read -r path; do
  [ -e "$dest$path" ] || missing="$missing $path"
done < "$tmp/installed"
check "every file of the install rules is installed ($(wc -l < "$tmp/installed") files)" \
  test -z "$missing"
[ -z "$missing" ] || echo "# missing:$missing"

# The pieces a user needs, by name
for file in \
    "$libdir/libhp-protocols-1.0.so" \
    "$libdir/libhp-protocols-1.0.so.0" \
    "$libdir/pkgconfig/hp-protocols-1.0.pc" \
    "$includedir/hp-protocols.h" \
    "$includedir/hp-mpi.h" \
    "$includedir/hp-enum-types.h" \
    "$includedir/hp-version.h" \
    "$includedir/hp-linear.h" \
    "$datadir/gir-1.0/Hp-1.0.gir" \
    "$libdir/girepository-1.0/Hp-1.0.typelib" \
    "$datadir/vala/vapi/hp-protocols-1.0.vapi" \
    "$datadir/vala/vapi/hp-protocols-1.0.deps" \
    "$datadir/doc/hp-protocols-1.0/index.html" \
    "$datadir/doc/hp-protocols-1.0/hp-protocols-1.0.devhelp2" \
    "$datadir/doc/hp-protocols-1.0/class.Module.html" \
    "$datadir/doc/hp-protocols-1.0/getting-started.html" \
    "$datadir/doc/hp-protocols-1.0/configs.html" \
    "$datadir/doc/hp-protocols-1.0/sharding.html" \
    "$datadir/doc/hp-protocols-1.0/local-map.html" \
    "$datadir/doc/hp-protocols-1.0/dtensor.html" \
    "$datadir/doc/hp-protocols-1.0/checkpoints.html"; do
  check "installed: ${file#"$dest"}" test -f "$file"
done

# Every public header of the library is installed: those that the
# umbrella header, hp-mpi.h and hp-enum-types.h include
missing=""
for header in $(cat "$here/../../hp-protocols/hp-protocols.h" "$here/../../hp-protocols/hp-mpi.h" \
                    "$here/../../hp-protocols/hp-enum-types.h" | grep -o '"hp-[a-z-]*\.h"' | tr -d '"'); do
  [ -f "$includedir/$header" ] || missing="$missing $header"
done
check "every header the umbrella headers include is installed" test -z "$missing"
[ -z "$missing" ] || echo "# missing:$missing"

# The override, under the Python site directory of the prefix
override=$(grep '/gi/overrides/Hp.py$' "$tmp/installed" || true)
check "installed: the PyGObject override" test -f "$dest${override:-/no-override}"
sitedir=$dest${override%/gi/overrides/Hp.py}

# A C program built with the installed .pc, relocated to the temporary
# tree: a copy whose prefix line names it (libdir and includedir are
# relative to ${prefix}, which the first check makes sure of)
pcfile=$libdir/pkgconfig/hp-protocols-1.0.pc
check "the .pc file's directories are relative to its prefix" \
  sh -c "grep -q '^libdir=\${prefix}/' '$pcfile' && grep -q '^includedir=\${prefix}/' '$pcfile'"
mkdir "$tmp/pkgconfig"
sed "s|^prefix=.*|prefix=$dest$prefix|" "$pcfile" > "$tmp/pkgconfig/hp-protocols-1.0.pc"
export PKG_CONFIG_PATH="$tmp/pkgconfig"
check "pkg-config gives the headers and library of the temporary tree" \
  sh -c "pkg-config --cflags --libs hp-protocols-1.0 | grep -q -e '-I$dest$prefix/include/hp-protocols-1.0 .*-L$libdir '"
# shellcheck disable=SC2046,SC2086
check "an outside C program builds against the installed headers and library" \
  $cc -Wall -Wextra -Werror -o "$tmp/outside" "$here/outside.c" $(pkg-config --cflags --libs hp-protocols-1.0)
check "the outside C program runs on the installed library" \
  env LD_LIBRARY_PATH="$libdir" "$tmp/outside" "$dest"

# A Vala program built as a user builds one, by package name: valac
# reads the installed VAPI and its .deps and checks every symbol's
# Since: against the version of the .pc
if command -v valac > /dev/null; then
  check "an outside Vala program builds with valac --pkg hp-protocols-1.0" \
    valac --vapidir "$datadir/vala/vapi" --pkg hp-protocols-1.0 -X -w \
      -o "$tmp/outside-vala" "$here/../../examples/vala/linear-from-config.vala"
  check "the outside Vala program runs on the installed library" \
    env LD_LIBRARY_PATH="$libdir" "$tmp/outside-vala"
fi

# Python with nothing but the three paths
check "Python finds Hp, its override and the library in the temporary tree" \
  env -i PATH="$PATH" HOME="${HOME:-/}" \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    GI_TYPELIB_PATH="$libdir/girepository-1.0" \
    LD_LIBRARY_PATH="$libdir" \
    PYTHONPATH="$sitedir" \
    "$python" "$here/installed.py" "$dest"

# python3 -m hp_config, installed next to the override, on a module of
# configuration classes
hp_config_py=$(grep '/hp_config.py$' "$tmp/installed" || true)
check "installed: hp_config.py next to the override" test -f "$sitedir/hp_config.py" -a "$dest$hp_config_py" = "$sitedir/hp_config.py"
mkdir "$tmp/models"
cat > "$tmp/models/models.py" <<'MODELS'
import gi
gi.require_version("Hp", "1.0")
from gi.repository import GObject, Hp


class Linear:
    class Config(Hp.Config):
        def do_get_property(self, pspec):
            return Hp.Config.get_value(self, pspec.name)


Hp.Config.type_add_field(Linear.Config.__gtype__, "width", GObject.TYPE_INT,
                         GObject.Value(GObject.TYPE_INT, 4), GObject.Value(GObject.TYPE_INT, 1),
                         None, "Width")
MODELS
# Python with nothing but the three paths, in the directory of models.py
python_env () {
  (cd "$tmp/models" && env -i PATH="$PATH" HOME="${HOME:-/}" \
    GI_TYPELIB_PATH="$libdir/girepository-1.0" LD_LIBRARY_PATH="$libdir" PYTHONPATH="$sitedir" "$@")
}
check "python3 -m hp_config runs the installed module" \
  python_env "$python" -c 'import hp_config, sys; sys.exit(not hp_config.__file__.startswith(sys.argv[1]))' "$dest"
shows_width () {
  python_env "$python" -m hp_config --import models show models+Linear+Config > "$tmp/show" &&
    cat "$tmp/show" && grep -qx '  width (int) = 4, >= 1' "$tmp/show"
}
check "python3 -m hp_config --import shows a Python configuration class" shows_width
check "python3 -m hp_config --import writes a file" \
  python_env "$python" -m hp_config --import models new models+Linear+Config --set width=7 -o linear.json
check "python3 -m hp_config --import validates it" \
  python_env "$python" -m hp_config --import models validate linear.json

# gjs -m hp-config.js, on the installed tree only
check "installed: hp-config.js" test -f "$datadir/hp-protocols-1.0/hp-config.js"
if command -v gjs > /dev/null; then
  check "gjs -m hp-config.js runs on the installed library" \
    env -i PATH="$PATH" HOME="${HOME:-/}" GI_TYPELIB_PATH="$libdir/girepository-1.0" \
      LD_LIBRARY_PATH="$libdir" gjs -m "$datadir/hp-protocols-1.0/hp-config.js" show HpLinearConfig
fi

# The installed programs run on the installed library
check "installed: hp-train" test -x "$bindir/hp-train"
check "the installed hp-train trains 2 steps" \
  env LD_LIBRARY_PATH="$libdir" "$bindir/hp-train" --steps 2 --log-every 1
if grep -q '/bin/hp-config$' "$tmp/installed"; then
  check "installed: hp-config" test -x "$bindir/hp-config"
  check "the installed hp-config runs" \
    env GI_TYPELIB_PATH="$libdir/girepository-1.0" LD_LIBRARY_PATH="$libdir" "$bindir/hp-config" --help
  check "python3 -m hp_config writes a file of C types" \
    python_env "$python" -m hp_config new HpLinearConfig -o c-linear.json
  check "the installed hp-config validates it" \
    env GI_TYPELIB_PATH="$libdir/girepository-1.0" LD_LIBRARY_PATH="$libdir" \
      "$bindir/hp-config" validate "$tmp/models/c-linear.json"
fi

echo "1..$count"
[ "$failed" -eq 0 ]
