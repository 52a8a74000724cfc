"""python -m streamfat signals: DBC signals reduced onto streamfat report's time buckets.

`streamfat report --dbc` (cli/commands/cmd_report.c, docs/REPORT.md) runs this after its
own pass over the logs, with the time base that pass ended with (t0, a bucket of 2^shift
ns, N buckets): the logs are read again through the library's block decoder (_core,
iter_batches: memory in proportion to one 4 MiB chunk), the frames decoded with the
package's DBC decoder (dbc.split_frames: cantools' model, the bit extraction in C), and each
signal reduced to its minimum and maximum per bucket, so the page's zoom levels keep every
extreme. Output on stdout, tab-separated, one block per signal:

    signal NAME MESSAGE UNIT VALUES
    min V0 V1 ... (N values; '-' where the bucket holds none)
    max V0 V1 ...

then `frames DECODED UNDECODED`. A failure is one line on stderr and exit 1 (2: wrong
usage, a --signal the DBC lacks)."""
import argparse
import sys

import numpy as np

PROG = "python -m streamfat signals"


class _Series:
    __slots__ = ("name", "message", "unit", "count", "lo", "hi", "order")

    def __init__(self, sig, msg, n, order):
        self.name = sig.name
        self.message = msg.name
        self.unit = sig.unit or ""
        self.count = 0
        self.lo = np.full(n, np.inf)
        self.hi = np.full(n, -np.inf)
        self.order = order

    def add(self, buckets, values):
        """Per-bucket minimum and maximum of values (runs of one bucket first, since the
        frames of a message come nearly in time order: few scattered updates)."""
        ok = ~np.isnan(values)
        if not ok.all():
            buckets, values = buckets[ok], values[ok]
        if not len(values):
            return
        self.count += len(values)
        starts = np.concatenate(([0], np.flatnonzero(np.diff(buckets)) + 1))
        b = buckets[starts]
        np.minimum.at(self.lo, b, np.minimum.reduceat(values, starts))
        np.maximum.at(self.hi, b, np.maximum.reduceat(values, starts))


def _sources(args):
    if args.volume is None:
        return list(args.sources), None
    from .volume import open_volume
    v = open_volume(args.volume, partition=args.partition)
    return [v.open(p if p.startswith("/") else "/" + p) for p in args.sources], v


def _pick(messages, wanted, busiest, top):
    """The signals to follow: those named (NAME or MESSAGE.NAME), else every signal of the
    DBC messages among the busiest ids, busiest first (the handful shown is chosen at the
    end, from those that vary)."""
    chosen = {}
    if wanted:
        for w in wanted:
            hit = [(k, s) for k, m in messages.items() for s in m.signals
                   if w in (s.name, m.name + "." + s.name)]
            if not hit:
                print(f"{PROG}: --signal {w}: no such signal in the DBC", file=sys.stderr)
                sys.exit(2)
            for k, s in hit:
                chosen.setdefault(k, []).append(s)
        return chosen
    order = [k for k in busiest if k in messages] or list(messages)
    n = 0
    for k in order[:16]:
        chosen[k] = list(messages[k].signals)
        n += len(chosen[k])
        if n >= 8 * top:
            break
    return chosen


def main(argv=None, prog=PROG):
    p = argparse.ArgumentParser(prog=prog)
    p.add_argument("--dbc", action="append", required=True)
    p.add_argument("--signal", action="append", default=[])
    p.add_argument("--top", type=int, default=6)
    p.add_argument("--busiest", default="", help="ID:EXT,... the busiest ids, busiest first")
    p.add_argument("--t0", type=int, required=True)
    p.add_argument("--shift", type=int, required=True)
    p.add_argument("--buckets", type=int, required=True)
    p.add_argument("--volume")
    p.add_argument("--partition", type=int, default=0)
    p.add_argument("--key", help="the secret key file of sealed logs (streamfat keygen)")
    p.add_argument("sources", nargs="+")
    args = p.parse_args(argv)

    import pyarrow as pa
    from . import dbc
    from .errors import DbcError
    from .reader import iter_batches

    try:
        messages = dbc.load(args.dbc)
    except DbcError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    busiest = []
    for item in filter(None, args.busiest.split(",")):
        i, e = item.split(":")
        busiest.append((int(i, 16), e == "1"))
    chosen = _pick(messages, args.signal, busiest, args.top)
    n = args.buckets
    series, k = {}, 0
    for key, sigs in chosen.items():
        for s in sigs:
            series[(messages[key].name, s.name)] = _Series(s, messages[key], n, k)
            k += 1
    follow = {key: messages[key] for key in chosen}
    stats = dbc.DecodeStats()
    try:
        sources, vol = _sources(args)
    except OSError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    try:
        for batch in iter_batches(sources, "frames", errors="skip", key=args.key):
            if not batch.num_rows:
                continue
            out, _raw = dbc.split_frames(pa.Table.from_batches([batch]), follow, stats,
                                         labels=False)
            for mname, t in out.items():
                ts = t.column("ts").combine_chunks().cast(pa.int64()).to_numpy()
                b = np.clip((ts - args.t0) >> args.shift, 0, n - 1)
                for col in t.column_names[2:]:
                    s = series.get((mname, col))
                    if s is None:
                        continue
                    c = t.column(col).combine_chunks()
                    v = c.to_numpy(zero_copy_only=False).astype(np.float64) \
                        if not c.null_count else \
                        c.cast(pa.float64()).fill_null(np.nan).to_numpy()
                    s.add(b, v)
    except (OSError, ValueError) as e:
        print(f"{prog}: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    finally:
        if vol is not None:
            for f in sources:
                f.close()
            vol.close()
    shown = sorted(series.values(), key=lambda s: s.order)
    if not args.signal:
        varying = [s for s in shown if s.count and np.nanmax(s.hi) > np.nanmin(s.lo)]
        shown = (varying or [s for s in shown if s.count])[:args.top]
    w = sys.stdout.write
    for s in shown:
        w(f"signal\t{s.name}\t{s.message}\t{s.unit}\t{s.count}\n")
        for tag, a in (("min", s.lo), ("max", s.hi)):
            w(tag)
            for x in a:
                w("\t-" if not np.isfinite(x) else "\t%.9g" % x)
            w("\n")
    w(f"frames\t{stats.frames}\t{stats.undecoded}\n")
    return 0


if __name__ == "__main__":           # pragma: no cover
    sys.exit(main())
