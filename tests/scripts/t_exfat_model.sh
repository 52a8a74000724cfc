#!/usr/bin/env bash
# Acceptance: seeded random operation sequences (tests/helpers/model_ops.c) checked against
# an in-memory model, with remounts between phases, on 64 MiB images made by streamfat
# mkfs (several seeds) and by mkfs.exfat; then fsck.exfat -n must call each image clean and
# exfat-fuse must show exactly the model's final tree. SF_MODEL_SEEDS / SF_MODEL_OPS
# override the seeds and the number of operations (a failure prints its seed).
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool fsck.exfat mkfs.exfat losetup fusermount

seeds=(${SF_MODEL_SEEDS:-1 2 3 4 5})
ops=${SF_MODEL_OPS:-2000}
img=$WORK/model.img

run_one() { # SEED MKFS(sf|exfatprogs)
    local seed=$1 how=$2
    log "seed $seed, $ops operations, image by $how"
    rm -rf "$img" "$WORK/dump"
    truncate -s 64M "$img"
    if [[ $how == sf ]]; then
        sf_ok mkfs -t exfat "$img" >/dev/null
    else
        mkfs.exfat "$img" >/dev/null
    fi
    run_helper model_ops "$img" "$seed" "$ops" 100 "$WORK/dump" ||
        fail "model_ops seed $seed on an image by $how"
    run_fsck_exfat "$img" || fail "seed $seed"
    fuse_mount "$img" "$WORK/mnt"
    diff -r "$WORK/dump" "$WORK/mnt" >&2 || fail "seed $seed: exfat-fuse shows another tree than the model"
    fuse_umount "$WORK/mnt"
}

for s in "${seeds[@]}"; do
    run_one "$s" sf
done
run_one "${seeds[0]}00" exfatprogs
