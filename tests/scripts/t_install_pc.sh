#!/usr/bin/env bash
# Installing and building against the library (issue 15, item 15): `cmake --install` with
# DESTDIR into a temporary tree, then the README's C program built with nothing but
# `pkg-config --cflags --libs streamfat` from that tree (streamfat.pc finds its prefix
# through ${pcfiledir}, so it works where DESTDIR put it, and after the tree is moved), run
# on an image; and `make demo` names the tools it needs when one is missing.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool cmake pkg-config cc python3
[[ -f $SF_BUILD/cmake_install.cmake ]] || skip "no install rules in $SF_BUILD"

DEST=$WORK/dest
DESTDIR=$DEST timeout 300 cmake --install "$SF_BUILD" --prefix /opt/streamfat </dev/null >"$WORK/install.log" ||
    { cat "$WORK/install.log" >&2; fail "cmake --install with DESTDIR failed"; }
pc=$(find "$DEST" -name streamfat.pc | head -n1)
[[ -n $pc ]] || fail "no streamfat.pc installed under DESTDIR"
log "installed: ${pc#"$DEST"}"

python3 - "$SF_SRC/README.md" >"$WORK/sample.c" <<'PY'
import re, sys
blocks = re.findall(r"^```c\n(.*?)^```", open(sys.argv[1], encoding="utf-8").read(), re.M | re.S)
if len(blocks) != 1:
    sys.exit("expected one ```c block in README.md, found %d" % len(blocks))
print(blocks[0], end="")
PY
san=()
[[ ${SF_SANITIZED:-0} == 1 || $SF_BUILD == *asan* ]] &&
    san=(-fsanitize=address,undefined -fno-omit-frame-pointer)

# build_and_run TREE: the sample against TREE's streamfat.pc only, run on a fresh image
build_and_run() {
    local tree=$1 pcdir flags
    pcdir=$(dirname "$(find "$tree" -name streamfat.pc | head -n1)")
    flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs --static streamfat) ||
        fail "pkg-config --cflags --libs streamfat failed for $pcdir"
    log "pkg-config: $flags"
    [[ $flags == *"$tree"* ]] || fail "pkg-config flags do not point into $tree: $flags"
    # shellcheck disable=SC2086
    timeout 300 cc -std=c11 -Wall -Wextra -Werror "${san[@]}" "$WORK/sample.c" $flags \
        -o "$WORK/sample" </dev/null || fail "the README's C program does not build from $tree"
    mkdir -p "$WORK/run"
    rm -f "$WORK/run/card.img"
    sf_ok mkfs -q -t exfat -s 64M "$WORK/run/card.img"
    (cd "$WORK/run" && timeout 60 "$WORK/sample") || fail "the sample built from $tree failed"
    sf_ok cat "$WORK/run/card.img" can0.log | matches '^can0 123#DEADBE$' ||
        fail "can0.log not written by the sample built from $tree"
}
build_and_run "$DEST"
mv "$DEST" "$WORK/moved"
build_and_run "$WORK/moved"
log "the README program builds from a DESTDIR install and from the same tree moved"

# ---- make demo and its tools ----
grep -A3 '`make demo` needs' "$SF_SRC/README.md" | matches 'zlib1g-dev libdeflate-dev' ||
    fail "README does not say what make demo needs"
rc=0
timeout 60 make -s -C "$SF_SRC" demo CMAKE=/nonexistent/cmake BUILD="$WORK/nobuild" \
    >"$WORK/demo.out" 2>&1 </dev/null || rc=$?
cat "$WORK/demo.out" >&2
((rc != 0)) || fail "make demo without cmake succeeded"
grep -q 'zlib1g-dev libdeflate-dev' "$WORK/demo.out" || fail "make demo without cmake does not say what it needs"
[[ ! -e $WORK/nobuild ]] || fail "make demo without cmake started a build"
