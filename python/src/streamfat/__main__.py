"""python -m streamfat lake ... (the same as streamfat-lake ...)."""
import sys

from . import lake


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("lake",):
        print("usage: python -m streamfat lake --dbc X.dbc [--device ID] --out LAKE SOURCES...",
              file=sys.stderr)
        return 2
    return lake.main(argv[1:], prog="python -m streamfat lake")


sys.exit(main())
