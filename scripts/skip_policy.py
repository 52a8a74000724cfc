#!/usr/bin/env python3
"""The skip policy of `make check` (issue 15, item 16): run after ctest on its JUnit output.

    skip_policy.py JUNIT_XML [ALLOW_LIST]      (ALLOW_LIST default: tests/allowed-skips.txt)

A test that exits 77 (a missing tool, no root, no loop devices ...) is "not run" for ctest,
which still reports "100% tests passed". This lists every test that did not run, with the
reason it printed (its last SKIP line). With CI=true (what CI sets) any such test that is not
in the allow-list fails the run: on CI everything a test needs is installed
(scripts/deps.sh), so a skip means a check silently not made. Without CI the list is only
printed.

Allow-list: one test per line, its name, then the reason it may skip (required); blank lines
and lines starting with # are ignored. Entries for tests that ran are reported as stale.

Exit status: 0 fine, 1 skips CI does not allow, 2 unusable input (no results under CI, a
malformed allow-list).
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


def read_allow(path):
    allow, bad = {}, []
    if not os.path.exists(path):
        return allow, bad
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            parts = line.split(None, 1)
            if len(parts) < 2 or not parts[1].strip():
                bad.append(f'{path}:{n}: "{parts[0]}" has no reason')
                continue
            allow[parts[0]] = parts[1].strip()
    return allow, bad


def skip_reason(case):
    """The test's own SKIP line if it printed one, else ctest's word for it."""
    out = case.findtext('system-out') or ''
    lines = [l.strip() for l in out.splitlines()
             if re.match(r'\s*(SKIP|skip)\b', l) and not l.strip().startswith('SKIP t_')]
    if lines:
        return lines[-1]
    el = case.find('skipped')
    if el is not None and el.get('message'):
        return el.get('message')
    return case.get('status', 'not run')


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    junit = argv[1]
    allow_path = argv[2] if len(argv) > 2 else 'tests/allowed-skips.txt'
    ci = os.environ.get('CI', '').lower() in ('1', 'true', 'yes')
    allow, bad = read_allow(allow_path)
    for b in bad:
        print(f'skip policy: {b}', file=sys.stderr)
    if bad:
        return 2
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        print(f'skip policy: no test results in {junit} ({e})', file=sys.stderr)
        return 2 if ci else 0

    skipped, ran = [], set()
    for case in root.iter('testcase'):
        name = case.get('name', '?')
        if case.get('status') in ('notrun', 'disabled'):
            skipped.append((name, skip_reason(case)))
        else:
            ran.add(name)

    refused = []
    if skipped:
        print(f'skip policy: {len(skipped)} test(s) did not run:')
        for name, why in skipped:
            if name in allow:
                print(f'  {name}: {why} (allowed: {allow[name]})')
            else:
                print(f'  {name}: {why}')
                refused.append(name)
    for name in sorted(set(allow) & ran):
        print(f'skip policy: {name} is in {allow_path} but ran; remove the entry')
    if refused and ci:
        print(f'skip policy: FAILED: with CI=true every test must run; install what they '
              f'need (scripts/deps.sh) or list them in {allow_path} with the reason: '
              + ' '.join(refused), file=sys.stderr)
        return 1
    if refused:
        print('skip policy: (CI=true would fail on these)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
