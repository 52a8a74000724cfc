"""docs/LAKE.md works as written (issue 26, item 18): the commands of its "Five commands"
block run, in order, in an empty directory, with this venv's python and the CLI under test,
and the query of step 5 answers; the SQL of its DuckDB section runs through the duckdb
module. What cannot run here is mapped, each with its reason (MAP); a command no rule
covers runs as written. The Spark example is run by test_spark.py
(test_lake_md_spark_example)."""
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SF, sf
from test_dbc import DBC, vehicle_lines

DOCS = Path(__file__).resolve().parents[2] / "docs"

# (pattern, replacement or None to skip, reason)
MAP = [
    (r"^pip install ", None, "the package is installed in this venv (t_python installs it)"),
    (r"--source can:can0", "--source stdin", "recorded candump lines for a live bus"),
    (r"/dev/(mmcblk0|sdb)", "card.img", "an image file for the card (in the logger, then "
     "in the PC's reader)"),
]


def commands(md, heading):
    """The commands of the first indented block under heading: one per numbered comment
    (`# 1. ...`), a command continued on the next lines while a quote is open."""
    text = md.split(heading, 1)[1]
    block = re.search(r"\n\n((?:    .*\n|\n)+)", text).group(1)
    out, cur = [], ""
    for line in block.splitlines():
        if not line.strip():
            continue
        cur = (cur + "\n" if cur else "") + line.strip()
        if cur.count('"') % 2 == 0 and cur.count("'") % 2 == 0:
            out.append(re.sub(r"\s+#\s+\d\..*$", "", cur).strip())
            cur = ""
    assert not cur, f"unterminated command: {cur}"
    return out


def mapped(cmd):
    for pat, rep, _why in MAP:
        if re.search(pat, cmd):
            if rep is None:
                return None
            cmd = re.sub(pat, rep, cmd)
    return cmd


def test_lake_md_five_commands(tmp_path, sfbin):
    cmds = commands((DOCS / "LAKE.md").read_text(encoding="utf-8"), "## Five commands")
    assert len(cmds) == 5, cmds
    (tmp_path / "vehicle.dbc").write_bytes(DBC.read_bytes())
    sf("mkfs", "--type", "exfat", "--size", "64M", tmp_path / "card.img")
    lines, _ = vehicle_lines(41, 2000)
    outputs = []
    for cmd in cmds:
        m = mapped(cmd)
        if m is None:
            continue
        argv = shlex.split(m)
        if argv[0] == "streamfat":
            argv[0] = SF
            stdin = ("\n".join(lines) + "\n").encode()
        elif argv[0] == "python":
            argv[0] = sys.executable
            stdin = b""
        else:
            pytest.fail(f"no rule for: {cmd}")
        r = subprocess.run(argv, input=stdin, capture_output=True, cwd=tmp_path, timeout=300)
        assert r.returncode == 0, f"{cmd}\n-> {m}\n{r.stderr.decode(errors='replace')}"
        outputs.append(r.stdout.decode())
    # steps 3 and 4: the card, then again (nothing new); step 5: one date and its RPM mean
    assert outputs[1].startswith("lake: 1 files (1 new"), outputs[1]
    assert "(0 new, 0 grown, 1 unchanged)" in outputs[2], outputs[2]
    head, *rows = outputs[3].splitlines()
    assert head.split("\t") == ["date", "avg(RPM)"] and len(rows) >= 1, outputs[3]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\d\t[0-9.e+-]+", r) for r in rows), rows


def test_lake_md_duckdb_section(tmp_path, sfbin, monkeypatch):
    duckdb = pytest.importorskip("duckdb")
    from streamfat import lake
    text = (DOCS / "LAKE.md").read_text(encoding="utf-8").split("## DuckDB", 1)[1]
    query = re.search(r"\n\n((?:    .*\n)+)", text).group(1)
    img = tmp_path / "card.img"
    lines, _ = vehicle_lines(42, 500)
    sf("log", "--mkfs", "exfat", "--size", "64M", "--source", "stdin", "--no-direct", "-q",
       img, input=("\n".join(lines) + "\n").encode())
    lake.ingest(tmp_path / "lake", [img], [DBC])
    monkeypatch.chdir(tmp_path)                   # the query's 'lake/**/*.parquet'
    con = duckdb.connect()
    rows = con.sql(query).fetchall()
    assert rows and sum(n for _m, n in rows) >= 500


def test_sql_command_errors(tmp_path):
    """python -m streamfat sql: a directory that is not a lake, bad SQL: one line, exit 1;
    wrong usage: exit 2."""
    def run(*args):
        return subprocess.run([sys.executable, "-m", "streamfat", "sql", *map(str, args)],
                              capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    r = run(tmp_path, "SELECT 1")
    assert r.returncode == 1 and r.stderr.strip().endswith("not a streamfat lake (no "
                                                           "_streamfat_lake.json)")
    assert len(r.stderr.strip().splitlines()) == 1
    from streamfat import lake
    lake.Lake(tmp_path / "L").save()
    r = run(tmp_path / "L", "SELEKT 1")
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert run(tmp_path / "L").returncode == 2
