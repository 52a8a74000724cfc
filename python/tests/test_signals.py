"""streamfat.signals (what `streamfat report --dbc` runs, docs/REPORT.md): the per-bucket
minimum and maximum of a signal equal a brute-force reduction, whatever the order of the
buckets (frames of a message arrive nearly, not exactly, in time order) and with missing
values (NaN: a multiplexed signal the frame does not carry)."""
from types import SimpleNamespace

import numpy as np

from streamfat.signals import _Series


def test_series_add_matches_brute_force():
    rng = np.random.default_rng(30)
    n = 64
    s = _Series(SimpleNamespace(name="RPM", unit="rpm"), SimpleNamespace(name="Engine"), n, 0)
    want_lo, want_hi = np.full(n, np.inf), np.full(n, -np.inf)
    values = 0
    for _ in range(20):
        k = int(rng.integers(1, 500))
        b = np.sort(rng.integers(0, n, k))
        b[rng.integers(0, k, k // 10)] = rng.integers(0, n, k // 10)   # some out of order
        v = rng.normal(0, 1000, k)
        v[rng.integers(0, k, k // 7)] = np.nan
        s.add(b, v)
        values += int(np.count_nonzero(~np.isnan(v)))
        for bi, vi in zip(b, v):
            if not np.isnan(vi):
                want_lo[bi] = min(want_lo[bi], vi)
                want_hi[bi] = max(want_hi[bi], vi)
    assert np.array_equal(s.lo, want_lo) and np.array_equal(s.hi, want_hi)
    assert s.count == values


def test_series_add_keeps_a_single_spike():
    s = _Series(SimpleNamespace(name="X", unit=""), SimpleNamespace(name="M"), 8, 0)
    b = np.repeat(np.arange(8), 1000)
    v = np.zeros(8000)
    v[4321] = 1e9
    s.add(b, v)
    assert s.hi[4] == 1e9 and s.hi.max() == 1e9 and s.lo.min() == 0
