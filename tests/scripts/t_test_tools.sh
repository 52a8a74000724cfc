#!/usr/bin/env bash
# Every command a test looks for is one scripts/deps.sh installs, and is installed.
#
# A test that finds a tool missing skips (exit 77) and ctest still reports "100% tests
# passed": on a fresh machine t_exfat_own, t_fat_mkfs, t_fat_foreign and t_mkfs_exfat
# skipped for want of sfdisk and sgdisk, which deps.sh did not install. So:
#   1. collect the commands the tests check for before use: `need_tool A B`, `command -v A`
#      (also inside C tests' system() strings) and `for t in A B; do ... command -v "$t"`
#      loops, in tests/scripts, tests/unit, tests/helpers, fuzz/ and examples/;
#   2. each must be in deps.sh's tool table (`scripts/deps.sh --tools`: command -> package)
#      or come from an Essential package (coreutils, util-linux, tar ...), else this fails;
#   3. every command of the table must be on this machine; if not, this skips naming them
#      (make check installs them first; with CI=true the skip fails the run).
# Not covered here: commands a test calls without checking for them first; those fail
# their test outright rather than skip, which no one overlooks.
set -euo pipefail
. "$SF_SRC/tests/scripts/lib.sh"

need_tool python3
command -v dpkg-query >/dev/null 2>&1 || skip "not a Debian system: deps.sh has no packages to check"

# Looked for, but deliberately not installed:
#   exfat-fuse  the name of mount.exfat-fuse on other distributions (lib.sh's fuse_bin)
# (chromium was here until issue 30: t_report renders every report in it, so deps.sh
# installs it, and t_bench_svg's rendering check runs too)
not_installed="exfat-fuse"

bash "$SF_SRC/scripts/deps.sh" --tools > "$WORK/table" ||
    fail "scripts/deps.sh --tools failed"
[[ -s $WORK/table ]] || fail "scripts/deps.sh --tools printed no tool table"

cd "$SF_SRC"
files=(tests/scripts/*.sh fuzz/*.sh tests/unit/*.c tests/helpers/*.c)
while IFS= read -r f; do files+=("$f"); done < <(find examples -name '*.sh' -o -name Makefile)
python3 - "${files[@]}" > "$WORK/used" <<'EOF'
import re, sys
for path in sys.argv[1:]:
    text = open(path, encoding='utf-8', errors='replace').read()
    lines = text.split('\n')
    for n, line in enumerate(lines):
        code = line if path.endswith('.c') else re.sub(r'(^|\s)#.*', '', line)
        names = []
        m = re.search(r'\bneed_tool\s+(.*)', code)
        if m and not code.lstrip().startswith('need_tool()'):
            # its arguments end where the command does: ; && || | ) or a redirection
            names += re.split(r'\s*(?:;|&&|\|\||\||\)|\d*>|<)', m.group(1))[0].split()
        names += re.findall(r'command -v\s+"?([A-Za-z0-9_./+-]+)"?', code)
        m = re.match(r'\s*for (\w+) in ([^;]*); do', code)
        if m and any(re.search(r'command -v\s+"?\$\{?%s\b' % m.group(1), l)
                     for l in lines[n:n + 4]):
            names += m.group(2).split()
        for name in names:
            name = name.strip('"\'')
            if name and name[0] not in '$-' and name not in ('||', '&&', '>/dev/null'):
                print(name, path)
EOF
[[ -s $WORK/used ]] || fail "no checked commands found: the scan is broken"
# the scan must see what issue 15 was about
for t in sfdisk sgdisk fsck.exfat mcopy; do
    grep -q "^$t " "$WORK/used" || fail "the scan did not find $t"
done

essential() {       # COMMAND: from an Essential package on this machine?
    local p r pkg
    p=$(command -v -- "$1" 2>/dev/null) || return 1
    [[ $p == /* ]] || return 0          # a shell builtin
    r=$(readlink -f "$p")
    for q in "$r" "$p" "${r#/usr}" "${p#/usr}"; do
        pkg=$(dpkg -S "$q" 2>/dev/null | head -n1) && break
    done
    [[ -n ${pkg:-} ]] || return 1
    pkg=${pkg%%:*}
    [[ $(dpkg-query -W -f='${Essential}' "${pkg%%,*}" 2>/dev/null) == yes ]]
}

bad=()
while read -r name path; do
    [[ " $not_installed " == *" $name "* ]] && continue
    awk -v t="$name" '$1 == t { f = 1 } END { exit !f }' "$WORK/table" && continue
    essential "$name" && continue
    bad+=("$name ($path)")
done < <(sort -u "$WORK/used")
if ((${#bad[@]})); then
    printf '  %s\n' "${bad[@]}" >&2
    fail "commands the tests look for that scripts/deps.sh does not install (add them to its tool table)"
fi

missing=()
while read -r name pkg; do
    if [[ $name == /* ]]; then [[ -x $name ]] && continue; else command -v "$name" >/dev/null 2>&1 && continue; fi
    missing+=("$name ($pkg)")
done < "$WORK/table"
# python3-can for Debian's own python (importlib.sh, t_export_formats)
if [[ -x /usr/bin/python3 ]] && ! /usr/bin/python3 -c 'import can' 2>/dev/null; then
    missing+=("python module can (python3-can)")
fi
if ((${#missing[@]})); then
    skip "not installed: ${missing[*]}; run scripts/deps.sh as root (make check does)"
fi
log "$(sort -u "$WORK/used" | awk '{print $1}' | sort -u | wc -l) commands looked for by the tests, all installed"
