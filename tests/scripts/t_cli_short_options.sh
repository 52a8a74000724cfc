#!/usr/bin/env bash
# Issue 26 item 20: one command line. A short option means one thing in every command
# (before: -s was --source in log and --size in mkfs; -f --format in export and --force in
# put and demo; -o --output in export and --image in demo; -r --repair in fsck and
# --recursive in rm), and docs/CLI.md's table of short options is what the commands do.
# For every command listed by `streamfat --help`, its --help OPTIONS lines ("-X, --long")
# are read:
# - one letter stands for one long option across all commands;
# - every pair is in docs/CLI.md's table and every row of the table is in some --help;
# - a letter of the table that a command's --help does not list is refused by that command
#   (wrong usage, exit 2): no command takes a short option it does not document;
# - the letters in a SYNOPSIS ([-F], [-o IMAGE]) are documented in the same help;
# - the long spellings kept from before still work: demo --image, mkfs --partition SCHEME.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"
need_sf
need_tool python3

sf_ok --help >"$WORK/main.help"
cmds=$(awk '/^COMMANDS/ { on = 1; next } on && /^  [a-z]+ / { print $1 } on && /^$/ && n++ { exit }' \
    "$WORK/main.help")
[[ $(wc -w <<<"$cmds") -ge 14 ]] || fail "fewer commands than expected in streamfat --help: $cmds"
for c in $cmds; do
    sf_ok "$c" --help >"$WORK/$c.help"
done

log "one letter, one long option; the table in docs/CLI.md says the same"
python3 - "$WORK" "$SF_SRC/docs/CLI.md" $cmds >"$WORK/letters" <<'PY' || fail "short options disagree"
import re, sys
work, table_md, cmds = sys.argv[1], sys.argv[2], sys.argv[3:]
seen = {}            # letter -> {long: [commands]}
per_cmd = {}
bad = []
for c in cmds:
    text = open(f"{work}/{c}.help").read()
    per_cmd[c] = set()
    for m in re.finditer(r"^  ((?:-[A-Za-z], )+)(--[a-z0-9-]+)", text, re.M):
        for letter in re.findall(r"-([A-Za-z])", m.group(1)):
            seen.setdefault(letter, {}).setdefault(m.group(2), []).append(c)
            per_cmd[c].add(letter)
    syn = text.split("SYNOPSIS", 1)[1].split("\n\n", 1)[0] if "SYNOPSIS" in text else ""
    for letter in re.findall(r"\[-([A-Za-z])\b", syn):
        if letter not in per_cmd[c]:
            bad.append(f"{c}: SYNOPSIS shows -{letter}, OPTIONS do not")
for letter, longs in sorted(seen.items()):
    if len(longs) > 1:
        bad.append(f"-{letter} means " + " and ".join(
            f"{l} ({', '.join(cs)})" for l, cs in sorted(longs.items())))
# docs/CLI.md: | `-s` | `--size` | mkfs, log |   (a row may give two letters: `-r`, `-R`)
table = {}
for line in open(table_md):
    m = re.match(r"\|\s*((?:`-[A-Za-z]`(?:,\s*)?)+)\s*\|\s*`(--[a-z0-9-]+)`\s*\|", line)
    if m:
        for letter in re.findall(r"`-([A-Za-z])`", m.group(1)):
            if letter in table and table[letter] != m.group(2):
                bad.append(f"docs/CLI.md gives -{letter} twice")
            table[letter] = m.group(2)
if not table:
    bad.append("no table of short options in docs/CLI.md")
for letter, longs in seen.items():
    for l in longs:
        if table.get(letter) != l:
            bad.append(f"-{letter} {l} ({', '.join(longs[l])}) is not in docs/CLI.md's table")
for letter, l in table.items():
    if letter not in seen:
        bad.append(f"docs/CLI.md lists -{letter} {l}, which no command's --help shows")
for b in bad:
    print(b, file=sys.stderr)
# for the shell: command and the table's letters it does not document
for c in cmds:
    print(c, "".join(sorted(set(table) - per_cmd[c])))
sys.exit(1 if bad else 0)
PY

log "a letter a command does not document is refused there"
while read -r c letters; do
    for ((i = 0; i < ${#letters}; i++)); do
        l=${letters:i:1}
        [[ $l == h ]] && continue
        rc=0
        "$SF" "$c" "-$l" x y z </dev/null >/dev/null 2>"$WORK/err" || rc=$?
        ((rc == 2)) || fail "$c -$l: exit $rc (not in its --help, so wrong usage expected)"
        grep -q "unknown option\|invalid option\|is --size" "$WORK/err" ||
            { cat "$WORK/err" >&2; fail "$c -$l: no 'unknown option'"; }
    done
done <"$WORK/letters"

log "the spellings kept: demo --image, mkfs --partition SCHEME; log -s is --size"
sf_ok mkfs -s 8M --partition mbr "$WORK/p.img" | matches 'partition: *MBR' ||
    fail "mkfs --partition mbr did not make an MBR"
sf_ok mkfs -s 8M --partition-table gpt "$WORK/g.img" | matches 'partition: *GPT' ||
    fail "mkfs --partition-table gpt did not make a GPT"
sf_err 2 log -s gen:can "$WORK/l.img"
grep -q -- "--source has no short form" "$SF_LAST_ERR" || fail "log -s SRC: no hint that -s is --size now"
(cd "$WORK" && timeout 300 "$SF" demo --image d1.img </dev/null >/dev/null 2>&1) ||
    fail "demo --image no longer works"
[[ -f $WORK/d1.img ]] || fail "demo --image made no image"
