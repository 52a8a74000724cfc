#!/usr/bin/env bash
# Acceptance: the seeded random operation sequences of tests/helpers/model_ops.c (checked
# against an in-memory model, with remounts between phases) on FAT32 and FAT16: 64 MiB
# images made by mkfs.fat and by `streamfat mkfs -t fat32/fat16`. Afterwards fsck.fat -n must
# report nothing at all and mtools must show exactly the model's final tree.
# SF_MODEL_SEEDS / SF_MODEL_OPS override the seeds and the number of operations.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
. "$SF_SRC/tests/scripts/fatlib.sh"
need_sf
need_tool fsck.fat mkfs.fat mcopy

seeds=(${SF_MODEL_SEEDS:-1 2 3})
ops=${SF_MODEL_OPS:-2000}
img=$WORK/model.img

run_one() { # SEED BITS MKFS(sf|dosfstools)
    local seed=$1 bits=$2 how=$3
    log "seed $seed, $ops operations, FAT$bits by $how"
    rm -rf "$img" "$WORK/dump" "$WORK/mt"
    if [[ $how == sf ]]; then
        sf_ok mkfs -q -t "fat$bits" -s 64M "$img"
    else
        truncate -s 64M "$img"
        mkfs.fat -F "$bits" "$img" >/dev/null
    fi
    run_helper model_ops "$img" "$seed" "$ops" 100 "$WORK/dump" ||
        fail "model_ops seed $seed on FAT$bits by $how"
    run_fsck_fat "$img" || fail "seed $seed"
    mkdir -p "$WORK/dump" "$WORK/mt"
    if [[ -n $(ls -A "$WORK/dump") ]]; then
        timeout 300 mcopy -s -n -i "$img" "::/*" "$WORK/mt/" </dev/null ||
            fail "seed $seed: mcopy of the whole tree failed"
    fi
    same_tree "$WORK/dump" "$WORK/mt" || fail "seed $seed: mtools shows another tree than the model"
}

# same_tree MODEL MTOOLS: the same directories and files with the same bytes. mtools spells
# each UTF-16 surrogate (a character outside the BMP, e.g. an emoji) as '_'.
same_tree() {
    python3 - "$1" "$2" <<'PY'
import os, sys, filecmp
def walk(root, fix):
    out = {}
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = os.path.relpath(p, root)
            if fix:
                rel = "".join("__" if ord(c) > 0xFFFF else c for c in rel)
            out[rel] = p
    return out
a, b = walk(sys.argv[1], True), walk(sys.argv[2], False)
bad = sorted(set(a) ^ set(b))
for rel in sorted(set(a) & set(b)):
    if os.path.isfile(a[rel]) != os.path.isfile(b[rel]) or (
            os.path.isfile(a[rel]) and not filecmp.cmp(a[rel], b[rel], shallow=False)):
        bad.append(rel)
for rel in bad[:20]:
    print("differs or missing on one side:", rel, file=sys.stderr)
print("== mtools: %d names compared" % len(a), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

for s in "${seeds[@]}"; do
    run_one "$s" 32 sf
    run_one "$s" 16 sf
done
run_one "${seeds[0]}00" 32 dosfstools
run_one "${seeds[0]}01" 16 dosfstools
