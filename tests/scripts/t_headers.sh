#!/usr/bin/env bash
# Every public header (include/streamfat/*.h) compiles alone as C++ (g++ -std=c++17 -Wall
# -Werror: they carry extern "C", so C++ programs must be able to include them) and as
# strict C (cc -std=c11 -pedantic -Werror); and the structs have one layout both ways:
# sizeof/alignof of every public struct and the offsets of struct sf_log's fields (whose
# atomics are plain integers in C++) printed by the same program built as C and as C++
# must be identical (issue 15, item 14).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_tool g++ cc

inc=$SF_SRC/include
n=0
for h in "$inc"/streamfat/*.h; do
    name=streamfat/$(basename "$h")
    # a declaration after the include: a header that is only macros (config.h) would
    # otherwise be an empty translation unit, which -pedantic rejects
    printf '#include <%s>\ntypedef int sf_tu_nonempty;\n' "$name" >"$WORK/one.c"
    cp "$WORK/one.c" "$WORK/one.cpp"
    timeout 120 g++ -std=c++17 -Wall -Wextra -Werror -I"$inc" -c "$WORK/one.cpp" \
        -o "$WORK/one.o" </dev/null || fail "$name does not compile as C++17"
    timeout 120 cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$inc" -c "$WORK/one.c" \
        -o "$WORK/one.o" </dev/null || fail "$name does not compile as strict C11"
    n=$((n + 1))
done
log "$n headers compile alone as C++17 and C11"

# ---- one layout in C and C++ ----
structs=$(sed -n 's/^struct \(sf_[a-z0-9_]*\) {.*/\1/p' "$inc"/streamfat/*.h | sort -u)
[[ -n $structs ]] || fail "no public structs found"
{
    echo '#include <stddef.h>'
    echo '#include <stdio.h>'
    for h in "$inc"/streamfat/*.h; do echo "#include <streamfat/$(basename "$h")>"; done
    echo 'int main(void) {'
    for s in $structs; do
        echo "    printf(\"$s %zu %zu\\n\", sizeof(struct $s), _Alignof(struct $s));"
    done
    # struct sf_log: every field, taken from its definition
    sed -n '/^struct sf_log {/,/^};/p' "$inc/streamfat/log_struct.h" |
        sed -n 's/^    [A-Za-z_][A-Za-z0-9_ ()]*[ *]\**\([a-z_][a-z0-9_]*\)\(\[[A-Z0-9_]*\]\)\?;.*/\1/p' |
        while read -r f; do
            echo "    printf(\"sf_log.$f %zu\\n\", offsetof(struct sf_log, $f));"
        done
    echo '    return 0;'
    echo '}'
} >"$WORK/layout.c"
sed 's/_Alignof/alignof/' "$WORK/layout.c" >"$WORK/layout.cpp"
nf=$(grep -c 'sf_log\.' "$WORK/layout.c" || true)
((nf >= 20)) || { cat "$WORK/layout.c" >&2; fail "only $nf fields of struct sf_log found"; }
timeout 120 cc -std=c11 -Wall -Werror -I"$inc" "$WORK/layout.c" -o "$WORK/layout_c" </dev/null ||
    fail "layout program does not build as C"
timeout 120 g++ -std=c++17 -Wall -Werror -I"$inc" "$WORK/layout.cpp" -o "$WORK/layout_cpp" </dev/null ||
    fail "layout program does not build as C++"
"$WORK/layout_c" >"$WORK/c.txt"
"$WORK/layout_cpp" >"$WORK/cpp.txt"
if ! diff "$WORK/c.txt" "$WORK/cpp.txt" >&2; then
    fail "struct layouts differ between C and C++"
fi
log "$(wc -l <"$WORK/c.txt") sizes and offsets identical in C and C++ ($nf fields of struct sf_log)"
