#!/usr/bin/env bash
# Every reader of logs in the tree reads every kind of block: a file that makes a decoder
# (sf_dec_init) also gives it unpack scratch (sf_dec_set_unpack: compressed blocks, kind 3),
# and each user-facing reader (cli/, python/src) takes a key (sf_dec_set_key: sealed files).
# report was merged beside compression without unpack scratch and showed compressed logs as
# all malformed blocks; this finds the next such reader before a user does.
# Exceptions, with the reason: readers of logs they wrote themselves, plain, or tests of
# the decoder alone.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

declare -A NO_UNPACK=(
    [size/full.c]="a code-size probe: links the decoder, reads nothing"
    [examples/baremetal/main.c]="reads back the plain logs it wrote"
    [tests/unit/test_rec.c]="tests the decoder's rules on plain blocks"
    [tests/unit/test_block_cipher.c]="tests the cipher stage on plain blocks"
    [tests/unit/test_tiny_log.c]="the tiny logger writes plain blocks only"
)
declare -A NO_KEY=(
    [cli/commands/cmd_demo.c]="checks the plain logs the demo itself wrote"
)
cd "$SF_SRC"
mapfile -t files < <(grep -rl --include='*.c' 'sf_dec_init(' cli python/src host src tests fuzz bench examples size 2>/dev/null | grep -v '^src/log/decode.c$' | sort)
((${#files[@]} >= 8)) || fail "found only ${#files[@]} readers: the scan is broken"
bad=0
for f in "${files[@]}"; do
    if [[ -z ${NO_UNPACK[$f]:-} ]] && ! grep -q 'sf_dec_set_unpack(' "$f"; then
        echo "$f: makes a decoder without unpack scratch (compressed blocks would be malformed)" >&2
        bad=1
    fi
    if [[ $f == cli/* || $f == python/src/* ]] && [[ -z ${NO_KEY[$f]:-} ]] &&
        ! grep -q 'sf_dec_set_key(' "$f"; then
        echo "$f: a user-facing reader without a key (sealed logs unreadable)" >&2
        bad=1
    fi
done
for f in "${!NO_UNPACK[@]}" "${!NO_KEY[@]}"; do
    [[ -f $f ]] || fail "an exception names $f, which does not exist"
done
((bad == 0)) || fail "a reader of logs misses a kind of block (see above)"
log "${#files[@]} readers: each unpacks, the user-facing ones take a key"
