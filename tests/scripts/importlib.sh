# Shared by the replay tests (t_import_asc, t_import_blf): python-can, the frame comparer,
# and import_file, which replays a log into a fresh image and exports it again.
# Source after lib.sh and loglib.sh.
[[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c 'import can' 2>/dev/null ||
    skip "Debian's python3-can is not installed"
PY=/usr/bin/python3
FR=$SF_SRC/tests/scripts/import_frames.py
IMG=$FASTWORK/imp.img
export TZ=UTC

# import_file FILE [LOG OPTIONS]: a fresh exFAT image, FILE replayed into it with
# `--source file:FILE`, the first log exported to $WORK/out.log (candump -L).
import_file() {
    local src=$1
    shift
    rm -f "$IMG"
    sf_ok mkfs -q -t exfat -s 32M "$IMG"
    log_json "$WORK/log.json" --source "file:$src" "$@" "$IMG" || fail "log of $src failed"
    sf_ok export --format candump -o "$WORK/out.log" "$IMG" LOG00001.SFL
}
