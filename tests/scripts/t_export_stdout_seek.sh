#!/usr/bin/env bash
# export to standard output, whatever standard output is (issue 26 item 5, docs/EXPORT.md
# "Standard output"): every format x {a pipe, a fresh regular file at offset 0, a regular
# file opened for appending that has content (>>), a regular file at a non-zero offset
# ({ echo x; export; } > f)}. Exit 0 each time, and what export wrote after the bytes that
# were there is a whole export:
# - the streaming formats (candump, asc, csv, csv-wide, raw): byte-identical to `-o FILE`;
# - BLF, which seeks back to fill in its header's totals only where that is safe (a regular
#   file at offset 0, not appending): identical to `-o FILE` there, else the file size stays
#   0 as through a pipe, and python-can reads every frame (export_check.py); before, `>>`
#   wrote the patched header at the end of the file;
# - MF4, which must seek to finish its header: into anything but a fresh file it is built
#   in a temporary file and copied out; finalized ("MDF     "), the size of `-o FILE`'s,
#   different at most in the FH block's creation time, and asammdf and python-can read
#   every frame (mf4_check.py); before, `>>` gave an "UnFinMF" file with exit 0 and a pipe
#   or an offset failed.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3
PY=${SF_PYENV:-$SF_SRC/build/pyenv}/bin/python
[[ -x $PY ]] && "$PY" -c 'import asammdf, can' 2>/dev/null ||
    skip "no venv with asammdf and python-can at $PY (scripts/pyenv.sh)"
/usr/bin/python3 -c 'import can' 2>/dev/null || skip "python3-can is not installed"

LOGF=$WORK/LOG00001.SFL
run_helper mklog "$LOGF" 512 2000
"$(helper log_frames)" "$LOGF" >"$WORK/ref"

# into KIND: run export -f FMT to standard output of that kind; the export's bytes (without
# what was there before) end up in $WORK/got.
into() {
    local fmt=$1 kind=$2 rc=0
    rm -f "$WORK/out"
    case $kind in
    pipe)
        set +o pipefail
        timeout 300 "$SF" export -f "$fmt" "$LOGF" 2>"$WORK/err" </dev/null | cat >"$WORK/out"
        rc=${PIPESTATUS[0]}
        set -o pipefail ;;
    fresh) timeout 300 "$SF" export -f "$fmt" "$LOGF" >"$WORK/out" 2>"$WORK/err" || rc=$? ;;
    append)
        echo "earlier content" >"$WORK/out"
        timeout 300 "$SF" export -f "$fmt" "$LOGF" >>"$WORK/out" 2>"$WORK/err" || rc=$? ;;
    offset)
        { echo "x"; timeout 300 "$SF" export -f "$fmt" "$LOGF" 2>"$WORK/err" || rc=$?; } \
            >"$WORK/out" ;;
    esac
    cat "$WORK/err" >&2
    has_sanitizer_report "$WORK/err" && fail "sanitizer report: export -f $fmt into $kind"
    ((rc == 0)) || fail "export -f $fmt into $kind: exit $rc"
    case $kind in
    append) tail -c +17 "$WORK/out" >"$WORK/got" ;;
    offset) tail -c +3 "$WORK/out" >"$WORK/got" ;;
    *) cp "$WORK/out" "$WORK/got" ;;
    esac
}

for fmt in candump asc csv csv-wide raw blf mf4; do
    sf_ok export -f "$fmt" -o "$WORK/want.$fmt" "$LOGF"
    for kind in pipe fresh append offset; do
        log "$fmt into $kind"
        into "$fmt" "$kind"
        case $fmt in
        blf)
            if [[ $kind == fresh ]]; then
                cmp -s "$WORK/got" "$WORK/want.blf" || fail "blf into a fresh file differs from -o"
            fi
            cp "$WORK/got" "$WORK/got.blf"
            /usr/bin/python3 "$SF_SRC/tests/scripts/export_check.py" "$WORK/ref" blf \
                "$WORK/got.blf" >&2 || fail "blf into $kind: python-can reads something else"
            /usr/bin/python3 - "$WORK/got.blf" "$kind" <<'PY' || fail "blf into $kind: header"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:4] == b"LOGG" and b[144:148] == b"LOBJ", b[:8]
assert b.count(b"LOGG") == 1, "a second file header (the patch appended)"
fsize, _, count = struct.unpack_from("<QQL", b, 16)
if sys.argv[2] == "fresh":
    assert (fsize, count) == (len(b), 2009), (fsize, count)
else:                                  # written as through a pipe: no size known
    assert fsize == 0, fsize
PY
            ;;
        mf4)
            [[ $(head -c 8 "$WORK/got") == "MDF     " ]] || fail "mf4 into $kind: not finalized"
            [[ $(stat -c %s "$WORK/got") == $(stat -c %s "$WORK/want.mf4") ]] ||
                fail "mf4 into $kind: $(stat -c %s "$WORK/got") bytes, -o gives $(stat -c %s "$WORK/want.mf4")"
            ndiff=$(cmp -l "$WORK/got" "$WORK/want.mf4" | wc -l || true)
            ((ndiff <= 8)) || fail "mf4 into $kind: $ndiff bytes differ from -o (the FH time has 8)"
            cp "$WORK/got" "$WORK/got.mf4"
            "$PY" "$SF_SRC/tests/scripts/mf4_check.py" check "$WORK/ref" "$WORK/got.mf4" \
                --expect-count 2009 >&2 || fail "mf4 into $kind: asammdf/python-can"
            ;;
        *)
            cmp -s "$WORK/got" "$WORK/want.$fmt" || fail "$fmt into $kind differs from -o"
            ;;
        esac
    done
done

log "the MF4 temporary file goes to TMPDIR and is gone afterwards"
mkdir "$WORK/tmpd"
TMPDIR=$WORK/tmpd sf_ok export -f mf4 "$LOGF" | cat >/dev/null
[[ -z $(ls -A "$WORK/tmpd") ]] || fail "temporary MF4 left in TMPDIR: $(ls -A "$WORK/tmpd")"
rc=0
set +o pipefail
TMPDIR=$WORK/nonexistent timeout 300 "$SF" export -f mf4 "$LOGF" 2>"$WORK/err" | cat >"$WORK/out"
rc=${PIPESTATUS[0]}
set -o pipefail
((rc == 1)) || fail "no TMPDIR for the MF4: exit $rc, expected 1"
[[ $(wc -l <"$WORK/err") == 1 && ! -s $WORK/out ]] ||
    { cat "$WORK/err" >&2; fail "no TMPDIR: not one line, or something was written"; }
