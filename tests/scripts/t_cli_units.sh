#!/usr/bin/env bash
# CLI units through the hidden debug subcommands (__parse-size / __parse-rate /
# __parse-duration print bytes, bytes per second, nanoseconds): the units table end to end,
# and that a bad value is a usage error (exit 2) with a one-line reason. The exhaustive
# cases are in tests/unit/test_units.c.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf

expect() {
    local kind=$1 in=$2 want=$3 got
    got=$(sf "__parse-$kind" "$in") || fail "__parse-$kind '$in' failed"
    [[ $got == "$want" ]] || fail "__parse-$kind '$in' gave $got, expected $want"
}
refuse() {
    local kind=$1 in=$2
    sf_err 2 "__parse-$kind" "$in"
    grep -qF -- "'$in'" "$SF_LAST_ERR" || fail "message for '$in' does not quote the value"
}

expect size 4096 4096
expect size 256M $((256 << 20))
expect size 256MiB $((256 << 20))
expect size 120GB 120000000000
expect size 1.5G $((3 << 29))
expect size 2T $((2 << 40))
expect size 4KB 4000
expect rate 500MB/s 500000000
expect rate 500MiB/s $((500 << 20))
expect rate 10KiB/s 10240
expect duration 1.5 1500000000
expect duration 200ms 200000000
expect duration 10m 600000000000
expect duration 2h 7200000000000

refuse size 12X
refuse size -1M
refuse size 0.1K
refuse size 99999999999999999999
refuse size ""
refuse rate 500M
refuse rate 500MB
refuse duration 1d
refuse duration -5s
refuse duration 10M
