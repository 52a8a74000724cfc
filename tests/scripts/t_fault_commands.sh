#!/bin/bash
# Every command that writes, under injected faults (STREAMFAT_FAULT=fail_at=N, cli/common/fault_env.h:
# device write N and all later ones fail with EIO): N = 1, 2, 3 ... 8, then growing steps,
# until the command gets through. Each failing run must exit 1 with a message and no
# sanitizer report, and leave a volume our checker can repair (verdict 0 or 1, never 2)
# after which both our checker and the independent one (fsck.exfat -n / fsck.fat -n) call
# it clean. mkfs: a failed format must be reported, and formatting again must work.
# Commands: mkdir, put, rm, log, fsck --repair (on a volume that needs repair), mkfs;
# exFAT and FAT32.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf

ns="1 2 3 4 5 6 7 8 12 16 24 32 48 64 96 128 192 256 384 512 768 1024 1536 2048 4096 8192"
head -c 300000 /dev/urandom >"$WORK/payload.bin"
total_fail=0

# after_fault FS IMG WHAT: the volume a failed command left must repair to clean.
after_fault() {
    local fs=$1 img=$2 what=$3 rc=0
    sf fsck "$img" >/dev/null 2>&1 || rc=$?
    ((rc == 0 || rc == 1)) || fail "$what: our checker's verdict $rc before repair"
    rc=0
    sf fsck --repair "$img" >/dev/null 2>&1 || rc=$?
    ((rc == 0 || rc == 1)) || fail "$what: repair exit $rc"
    sf_ok fsck "$img" >/dev/null
    run_fsck_indep "$fs" "$img"
}

# sweep FS NAME BASE CMD...: run CMD (with @IMG@ for the image) on copies of BASE.
sweep() {
    local fs=$1 name=$2 base=$3
    shift 3
    local n rc fails=0
    for n in $ns; do
        cp --sparse=always "$base" "$WORK/t.img"
        local args=("${@//@IMG@/$WORK/t.img}")
        rc=0
        STREAMFAT_FAULT=fail_at=$n timeout 300 "$SF" "${args[@]}" >/dev/null 2>"$WORK/err" || rc=$?
        has_sanitizer_report "$WORK/err" && { cat "$WORK/err" >&2; fail "$fs $name fail_at=$n: sanitizer"; }
        # fsck has its own statuses: 1 = problems found and repaired (done), 2 = I/O error.
        if [[ $name == fsck* ]]; then
            ((rc == 1)) && rc=0
            ((rc == 2)) && rc=1
        fi
        if ((rc == 0)); then
            log "$fs $name: succeeds from fail_at=$n on; $fails faulted runs checked"
            total_fail=$((total_fail + fails))
            return 0
        fi
        [[ -s $WORK/err ]] || fail "$fs $name fail_at=$n: exit $rc without a message"
        ((rc == 1 || rc == 3)) || { cat "$WORK/err" >&2; fail "$fs $name fail_at=$n: exit $rc"; }
        if [[ $name == mkfs ]]; then
            sf_ok mkfs --force -t "$fs" "$WORK/t.img" >/dev/null
            sf_ok fsck "$WORK/t.img" >/dev/null
            run_fsck_indep "$fs" "$WORK/t.img"
        else
            after_fault "$fs" "$WORK/t.img" "$fs $name fail_at=$n"
        fi
        fails=$((fails + 1))
    done
    fail "$fs $name: still failing at fail_at=${ns##* }"
}

for fs in exfat fat32; do
    base=$WORK/$fs.img
    sf_ok mkfs -t "$fs" -s 64M "$base" >/dev/null
    sf_ok mkdir "$base" DIR
    sf_ok put "$base" "$WORK/payload.bin" DIR/OLD.BIN
    # A volume that needs repair: a put cut short by a failing device.
    needs=$WORK/$fs-needs.img
    cp --sparse=always "$base" "$needs"
    STREAMFAT_FAULT=fail_at=6 "$SF" put "$needs" "$WORK/payload.bin" DIR/NEW.BIN 2>/dev/null &&
        fail "the fault did not fire"
    rc=0; sf fsck "$needs" >/dev/null 2>&1 || rc=$?
    ((rc == 1)) || fail "$fs: the volume for fsck --repair should need repair (verdict $rc)"

    sweep "$fs" mkdir "$base" mkdir @IMG@ DIR/SUB
    sweep "$fs" put "$base" put @IMG@ "$WORK/payload.bin" DIR/NEW.BIN
    sweep "$fs" rm "$base" rm @IMG@ DIR/OLD.BIN
    sweep "$fs" log "$base" log --source gen:can --max-records 20000 --chunk 4K \
        --split-size 64K --no-direct -q @IMG@
    sweep "$fs" "fsck --repair" "$needs" fsck --repair @IMG@
    sweep "$fs" mkfs "$base" mkfs --force -t "$fs" @IMG@
done
log "faulted runs checked: $total_fail"
