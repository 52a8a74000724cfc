#!/usr/bin/env bash
# Issue 26 item 15: a build tree configured before the optional libraries were installed
# (make test-quick on a fresh machine, then scripts/deps.sh) turns them on at its next
# build; it kept "not found" in CMake's cache forever (t_log_control: "built without
# cJSON"). And make names each feature that is off and the package that turns it on.
#
# "Installing" here is making a library's .pc file visible: pkg-config searches a
# directory of links ($WORK/pc, PKG_CONFIG_LIBDIR) to every .pc file of this machine but
# those of liburing, libcjson and libdeflate (make demo names the three); then the three
# links are added and the same tree is built again with make build, no configure by hand.
# README's package line names every package such a line names.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_tool cmake make pkg-config cc
pkg-config --exists libcjson liburing libdeflate || skip "libcjson, liburing or libdeflate not installed"

PC=$WORK/pc B=$WORK/build
mkdir -p "$PC"
IFS=: read -ra dirs <<<"$(pkg-config --variable pc_path pkg-config)"
hidden=(libcjson.pc liburing.pc libdeflate.pc)
for d in "${dirs[@]}"; do
    [[ -d $d ]] || continue
    for f in "$d"/*.pc; do
        [[ -e $f ]] || continue
        n=$(basename "$f")
        [[ " ${hidden[*]} " == *" $n "* ]] && continue
        [[ -e $PC/$n ]] || ln -s "$f" "$PC/$n"
    done
done
export PKG_CONFIG_LIBDIR=$PC
unset PKG_CONFIG_PATH
pkg-config --exists libcjson && fail "libcjson still visible through $PC"

# the library and the CLI only (the tests' build is not what this is about); ccache if the
# caller uses it (make check does not need it)
timeout 300 cmake -S "$SF_SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DSF_TESTS=OFF \
    </dev/null >"$WORK/configure.out" 2>&1 || { cat "$WORK/configure.out" >&2; fail "configure failed"; }

log "make demo with the three libraries hidden: one line per feature that is off"
timeout 900 make -s -C "$SF_SRC" demo BUILD="$B" DEMO_DIR="$WORK/demo" JOBS=2 </dev/null \
    >"$WORK/make1.out" 2>&1 || { tail -30 "$WORK/make1.out" >&2; fail "make demo (libraries hidden) failed"; }
for pkg in libcjson-dev liburing-dev libdeflate-dev; do
    grep -qE "^streamfat: .* is off: install $pkg " "$WORK/make1.out" ||
        { cat "$WORK/make1.out" >&2; fail "make build does not say that $pkg turns a feature on"; }
done
[[ $(grep -c ' is off: install ' "$WORK/make1.out") == 3 ]] ||
    { cat "$WORK/make1.out" >&2; fail "not one line per feature that is off"; }
# README's package line for make demo names every package a feature-off line names
apt=$(grep -A6 '`make demo` needs' "$SF_SRC/README.md" | tr '\n' ' ')
for pkg in $(sed -nE 's/.* is off: install ([^ ]+) .*/\1/p' "$WORK/make1.out"); do
    grep -q "apt-get install [^\`]*\b$pkg\b" <<<"$apt" ||
        fail "README's package line for make demo omits $pkg"
done
rc=0
"$B/streamfat" log --print-config --source gen:can x.img </dev/null >"$WORK/pc1.out" 2>&1 || rc=$?
((rc != 0)) && grep -q "without cJSON" "$WORK/pc1.out" ||
    { cat "$WORK/pc1.out" >&2; fail "--print-config works without libcjson (exit $rc)"; }

log "the packages appear: the same tree turns them on at its next build"
for d in "${dirs[@]}"; do
    for n in "${hidden[@]}"; do
        [[ -e $d/$n && ! -e $PC/$n ]] && ln -s "$d/$n" "$PC/$n"
    done
done
timeout 900 make -s -C "$SF_SRC" build BUILD="$B" JOBS=2 </dev/null >"$WORK/make2.out" 2>&1 ||
    { tail -30 "$WORK/make2.out" >&2; fail "make build (libraries visible) failed"; }
grep -q ' is off: ' "$WORK/make2.out" &&
    { cat "$WORK/make2.out" >&2; fail "a feature is still off after its package appeared"; }
"$B/streamfat" log --print-config --source gen:can x.img </dev/null >"$WORK/pc2.out" 2>&1 ||
    { cat "$WORK/pc2.out" >&2; fail "log --print-config refused after libcjson appeared"; }
grep -q '^SF_HAVE_URING:' "$B/CMakeCache.txt" && fail "SF_HAVE_URING cached"
grep -qE '^(CJSON|URING|DEFLATE)_FOUND:INTERNAL=1' "$B/CMakeCache.txt" ||
    fail "the libraries were not found again"
nm "$B/streamfat" | matches io_uring_queue_init || fail "streamfat not linked with liburing"
