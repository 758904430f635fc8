#!/usr/bin/python3
"""Decode zerostat payloads with stock msgpack, following docs/wire-format.md only.

Usage: decode.py FILE   (one payload, or frames: 4-byte big-endian length + payload)
Prints one JSON object: the merged views of the last export cycle in FILE.
"""
import gzip
import json
import struct
import sys

import msgpack


def payloads(data):
    if data[:1] == b"\x95" or data[:2] == b"\x1f\x8b":
        yield data
        return
    i = 0
    while i < len(data):
        (n,) = struct.unpack(">I", data[i:i + 4])
        yield data[i + 4:i + 4 + n]
        i += 4 + n


# Distributions: 3 counts a value equal to a bound in the bucket above it
# (OpenCensus's rule), 6 in the bucket below it (Prometheus's and
# OpenTelemetry's); their rows are the same.
DIST = (3, 6)
# An exponential distribution (7): count, sum, min, max, scale, zero_count,
# positive_offset, positive_counts, negative_offset, negative_counts.
EXP = 7
# A summary (8): count, sum, quantile_values (one float per quantile; the
# view's bounds are its quantiles, in 0..1, increasing); no overflow row.
SUMMARY = 8
INT32 = (-(1 << 31), (1 << 31) - 1)


def data_len(agg):
    """How many data elements a row of aggregation agg has."""
    return 6 if agg in DIST else 10 if agg == EXP else 3 if agg == SUMMARY else 1


def exp_range(offset, counts, sign):
    """One sign's buckets of an exponential row, checked: offset and the
    last index int32s, counts unsigned."""
    assert isinstance(offset, int) and INT32[0] <= offset <= INT32[1], "%s offset %r is not an int32" % (sign, offset)
    assert isinstance(counts, list), "%s counts are not an array" % sign
    assert all(isinstance(c, int) and c >= 0 for c in counts), "%s counts are not unsigned" % sign
    assert not counts or offset + len(counts) - 1 <= INT32[1], "%s buckets pass index 2^31-1" % sign
    return {"offset": offset, "counts": counts}


def rows_of(version, agg, nkeys, nbounds, rows):
    """A view's rows as version 1's row arrays. Version 2 sends them as
    columns, [n, values, data, starts] (docs/wire-format.md, Version 2)."""
    if version == 1:
        return rows
    n, values, data, starts = rows
    assert len(values) == nkeys, "not one value column per key"
    assert len(data) == (6 + nbounds if agg in DIST else 2 + nbounds if agg == SUMMARY else data_len(agg)), "wrong number of data columns"
    assert all(len(col) == n for col in values + data), "column length is not n"
    assert len(starts) % 2 == 0, "starts are not pairs"
    idx = starts[0::2]
    assert idx == sorted(set(idx)) and all(0 <= i < n for i in idx), "start rows not increasing below n"
    own = dict(zip(starts[0::2], starts[1::2]))
    out = []
    for i in range(n):
        row = [col[i] for col in values]
        if agg in DIST:  # count, sum, min, max, sum_sq_dev, then a column per bucket
            row += [data[c][i] for c in range(5)] + [[col[i] for col in data[5:]]]
        elif agg == EXP:  # a column per field; the counts columns hold arrays
            row += [col[i] for col in data]
        elif agg == SUMMARY:  # count, sum, then a column per quantile
            row += [data[0][i], data[1][i], [col[i] for col in data[2:]]]
        else:
            row.append(data[0][i])
        if i in own:
            row.append(own[i])
        out.append(row)
    return out


def typed(t, text):
    """A typed key's value: 1 bool, 2 int, 3 double, 5-8 slices (JSON, but
    a bool slice as "[true false]"); the text when it does not parse."""
    try:
        if t == 1 and text in ("true", "false"):
            return text == "true"
        if t == 2:
            return int(text)
        if t == 3:
            return float(text)
        if t == 5:
            assert text[0] == "[" and text[-1] == "]"
            return [{"true": True, "false": False}[x] for x in text[1:-1].split()]
        if t in (6, 7, 8):
            return json.loads(text)
    except (ValueError, KeyError, AssertionError):
        pass
    return text


def decode(raw):
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    p = msgpack.unpackb(raw, raw=False, timestamp=3, strict_map_key=False)
    assert isinstance(p, list) and len(p) == 5, "payload is not a 5-element array"
    version, header, resource, views, strings = p
    assert version in (1, 2), "unsupported version %r" % version
    s = lambda i: strings[i]
    start, end, temporality, sequence, part, last = header
    out = {
        "sequence": sequence, "part": part, "last": last, "temporality": temporality,
        "start": start.isoformat(), "end": end.isoformat(),
        "resource": {s(k): s(v) for k, v in resource}, "views": {},
    }
    for name, desc, unit, agg, keys, bounds, vstart, rows, overflow in views:
        assert agg in (1, 2, 3, 4, 5, 6, 7, 8), "aggregation %r" % agg
        assert agg in DIST or agg == SUMMARY or not bounds, "bounds on aggregation %r" % agg
        if agg == SUMMARY:
            assert all(0 <= q <= 1 for q in bounds), "quantile outside 0..1"
            assert all(a < b for a, b in zip(bounds, bounds[1:])), "quantiles not increasing"
            assert overflow is None, "summary overflow row"
        # A typed key is [ref, type]: its values are the text of an
        # OpenTelemetry attribute of that type.
        types = [k[1] if isinstance(k, list) else 0 for k in keys]
        keys = [k[0] if isinstance(k, list) else k for k in keys]
        assert all(t in (0, 1, 2, 3, 5, 6, 7, 8) for t in types), "key type"
        v = out["views"].setdefault(s(name), {
            "description": s(desc), "unit": s(unit), "aggregation": agg,
            "upper_inclusive": agg == 6,
            "keys": [s(k) for k in keys], "bounds": bounds, "rows": []})
        n = len(keys)
        # The overflow row has no tag values; tag it as OpenTelemetry does.
        tagged = [(row, n, None) for row in rows_of(version, agg, len(keys), len(bounds), rows)]
        if overflow is not None:
            tagged.append((overflow, 0, {"otel.metric.overflow": "true"}))
        for row, n, tags in tagged:
            nd = data_len(agg)
            # A row, the overflow row too, may end with its own start.
            assert len(row) in (n + nd, n + nd + 1), "bad row length"
            values, data = row[:n], row[n:n + nd]
            r = {"tags": tags or {s(k): s(val) for k, val in zip(keys, values) if val != 0}}
            if tags is None and any(types):
                r["typed"] = {s(k): typed(t, s(val)) for k, t, val in zip(keys, types, values) if val != 0 and t}
            if len(row) == n + nd + 1:
                r["start"] = row[-1].isoformat()
            if agg == 1:
                r["count"] = data[0]
            elif agg in (2, 5):  # 5: an up-down sum, always its total
                r["sum"] = data[0]
            elif agg == 4:
                r["value"] = data[0]
            elif agg in DIST:
                count, total, mn, mx, ssd, buckets = data
                assert len(buckets) == len(bounds) + 1 and sum(buckets) == count
                r.update(count=count, sum=total, min=mn, max=mx, sum_sq_dev=ssd, buckets=buckets)
            elif agg == EXP:
                count, total, mn, mx, scale, zero, poff, pos, noff, neg = data
                assert isinstance(scale, int) and -10 <= scale <= 20, "scale %r" % scale
                r.update(count=count, sum=total, min=mn, max=mx, scale=scale, zero_count=zero,
                         positive=exp_range(poff, pos, "positive"), negative=exp_range(noff, neg, "negative"))
                assert zero + sum(pos) + sum(neg) == count, "zero count and bucket counts do not add up to count"
            elif agg == SUMMARY:
                count, total, qvalues = data
                assert isinstance(count, int) and count >= 0, "summary count is not unsigned"
                assert isinstance(qvalues, list) and len(qvalues) == len(bounds), "quantile values: not one per quantile"
                r.update(count=count, sum=total, quantiles=[[q, x] for q, x in zip(bounds, qvalues)])
            v["rows"].append(r)
    return out


def main():
    data = open(sys.argv[1], "rb").read()
    merged = None
    for raw in payloads(data):
        p = decode(raw)
        if merged is None or p["sequence"] != merged["sequence"]:
            merged = dict(p, parts=0, views={})
        merged["parts"] += 1
        for name, v in p["views"].items():
            m = merged["views"].setdefault(name, dict(v, rows=[]))
            m["rows"].extend(v["rows"])
    json.dump(merged, sys.stdout, sort_keys=True)


main()
