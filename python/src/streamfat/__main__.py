"""python -m streamfat lake ... (the same as streamfat-lake ...), python -m streamfat sql
LAKE QUERY (DuckDB over a lake, with the duckdb module of the [duckdb] extra: no DuckDB
command-line program needed) and python -m streamfat signals ... (DBC signals for
`streamfat report --dbc`: streamfat/signals.py)."""
import sys

USAGE = ("usage: python -m streamfat lake --dbc X.dbc [--device ID] --out LAKE SOURCES...\n"
         "       python -m streamfat sql LAKE QUERY     (QUERY reads the view `lake`)\n"
         "       python -m streamfat signals --dbc X.dbc --t0 NS --shift K --buckets N SOURCES..."
         "\n                                   (run by streamfat report --dbc)")


def sql(argv, prog="python -m streamfat sql"):
    """QUERY over the lake's Parquet parts as the view `lake` (hive partitioning: device,
    message and date are columns; union_by_name: every message has its own columns);
    the result printed as a table. Exit 1 with one line on an error, 2 on wrong usage."""
    if len(argv) != 2:
        print(USAGE, file=sys.stderr)
        return 2
    root, query = argv
    import os
    if not os.path.isfile(os.path.join(root, "_streamfat_lake.json")):
        print(f"{prog}: {root}: not a streamfat lake (no _streamfat_lake.json)",
              file=sys.stderr)
        return 1
    try:
        import duckdb
    except ImportError:
        print(f"{prog}: needs the duckdb module: pip install './python[duckdb]'",
              file=sys.stderr)
        return 1
    con = duckdb.connect()
    glob = os.path.join(root, "**", "*.parquet").replace("'", "''")
    try:
        con.execute(f"CREATE VIEW lake AS SELECT * FROM read_parquet('{glob}', "
                    "hive_partitioning = true, union_by_name = true)")
        rel = con.sql(query)
    except duckdb.Error as e:
        print(f"{prog}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    if rel is not None:
        cols = rel.columns
        rows = rel.fetchall()
        print("\t".join(cols))
        for r in rows:
            print("\t".join("" if v is None else str(v) for v in r))
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "lake":
        from . import lake
        return lake.main(argv[1:], prog="python -m streamfat lake")
    if argv and argv[0] == "sql":
        return sql(argv[1:])
    if argv and argv[0] == "signals":
        from . import signals
        return signals.main(argv[1:])
    print(USAGE, file=sys.stderr)
    return 2


sys.exit(main())
