#!/usr/bin/ruby
# Decode zerostat payloads with stock msgpack, following docs/wire-format.md only.
# Usage: decode.rb FILE   (one payload, or frames: 4-byte big-endian length + payload)
# Prints one JSON object: the merged views of the last export cycle in FILE.
require "json"
require "msgpack"
require "time"
require "zlib"
require "stringio"

FACTORY = MessagePack::Factory.new
FACTORY.register_type(-1, Time, packer: MessagePack::Time::Packer, unpacker: MessagePack::Time::Unpacker)

def payloads(data)
  return [data] if data.getbyte(0) == 0x95 || data.byteslice(0, 2) == "\x1f\x8b".b
  out = []
  i = 0
  while i < data.bytesize
    n = data.byteslice(i, 4).unpack1("N")
    out << data.byteslice(i + 4, n)
    i += 4 + n
  end
  out
end

# Distributions: 3 counts a value equal to a bound in the bucket above it
# (OpenCensus's rule), 6 in the bucket below it (Prometheus's and
# OpenTelemetry's); their rows are the same.
DIST = [3, 6].freeze
# An exponential distribution (7): count, sum, min, max, scale, zero_count,
# positive_offset, positive_counts, negative_offset, negative_counts.
EXP = 7
# A summary (8): count, sum, quantile_values (one float per quantile; the
# view's bounds are its quantiles, in 0..1, increasing); no overflow row.
SUMMARY = 8
INT32 = (-(1 << 31))..((1 << 31) - 1)

# How many data elements a row of aggregation agg has.
def data_len(agg)
  return 6 if DIST.include?(agg)
  return 3 if agg == SUMMARY
  agg == EXP ? 10 : 1
end

# One sign's buckets of an exponential row, checked: offset and the last
# index int32s, counts unsigned.
def exp_range(offset, counts, sign)
  raise "#{sign} offset #{offset.inspect} is not an int32" unless offset.is_a?(Integer) && INT32.cover?(offset)
  raise "#{sign} counts are not an array" unless counts.is_a?(Array)
  raise "#{sign} counts are not unsigned" unless counts.all? { |c| c.is_a?(Integer) && c >= 0 }
  raise "#{sign} buckets pass index 2^31-1" unless counts.empty? || offset + counts.size - 1 <= INT32.max
  { "offset" => offset, "counts" => counts }
end

# A view's rows as version 1's row arrays. Version 2 sends them as
# columns, [n, values, data, starts] (docs/wire-format.md, Version 2).
def rows_of(version, agg, nkeys, nbounds, rows)
  return rows if version == 1
  n, values, data, starts = rows
  raise "not one value column per key" unless values.size == nkeys
  ndata = if DIST.include?(agg) then 6 + nbounds
          elsif agg == SUMMARY then 2 + nbounds
          else data_len(agg)
          end
  raise "wrong number of data columns" unless data.size == ndata
  raise "column length is not n" unless (values + data).all? { |col| col.size == n }
  raise "starts are not pairs" unless starts.size.even?
  idx = starts.each_slice(2).map(&:first)
  raise "start rows not increasing below n" unless idx == idx.uniq.sort && idx.all? { |i| i >= 0 && i < n }
  own = starts.each_slice(2).to_h
  (0...n).map do |i|
    row = values.map { |col| col[i] }
    if DIST.include?(agg) # count, sum, min, max, sum_sq_dev, then a column per bucket
      row += (0...5).map { |c| data[c][i] } + [data[5..].map { |col| col[i] }]
    elsif agg == EXP # a column per field; the counts columns hold arrays
      row += data.map { |col| col[i] }
    elsif agg == SUMMARY # count, sum, then a column per quantile
      row += [data[0][i], data[1][i], data[2..].map { |col| col[i] }]
    else
      row << data[0][i]
    end
    row << own[i] if own.key?(i)
    row
  end
end

# A typed key's value: 1 bool, 2 int, 3 double, 5-8 slices (JSON, but a
# bool slice as "[true false]"); the text when it does not parse.
def typed(t, text)
  case t
  when 1 then return text == "true" if %w[true false].include?(text)
  when 2 then return Integer(text, 10)
  when 3 then return Float(text.sub(/\A\+?Inf\z/, "Infinity").sub(/\A-Inf\z/, "-Infinity"))
  when 5
    if text.start_with?("[") && text.end_with?("]")
      parts = text[1..-2].split
      return parts.map { |x| x == "true" } if parts.all? { |x| %w[true false].include?(x) }
    end
  when 6, 7, 8 then return JSON.parse(text)
  end
  text
rescue ArgumentError, JSON::ParserError
  text
end

def decode(raw)
  raw = Zlib::GzipReader.new(StringIO.new(raw)).read if raw.byteslice(0, 2) == "\x1f\x8b".b
  p = FACTORY.unpacker.feed(raw).read
  raise "payload is not a 5-element array" unless p.is_a?(Array) && p.size == 5
  version, header, resource, views, strings = p
  raise "unsupported version #{version}" unless [1, 2].include?(version)
  start, finish, temporality, sequence, part, last = header
  out = { "sequence" => sequence, "part" => part, "last" => last, "temporality" => temporality,
          "start" => start.utc.iso8601(9), "end" => finish.utc.iso8601(9),
          "resource" => resource.to_h { |k, v| [strings[k], strings[v]] }, "views" => {} }
  views.each do |name, desc, unit, agg, keys, bounds, _vstart, rows, overflow|
    raise "aggregation #{agg}" unless (1..8).include?(agg)
    raise "bounds on aggregation #{agg}" unless DIST.include?(agg) || agg == SUMMARY || bounds.empty?
    if agg == SUMMARY
      raise "quantile outside 0..1" unless bounds.all? { |q| q >= 0 && q <= 1 }
      raise "quantiles not increasing" unless bounds.each_cons(2).all? { |a, b| a < b }
      raise "summary overflow row" unless overflow.nil?
    end
    # A typed key is [ref, type]: its values are the text of an
    # OpenTelemetry attribute of that type.
    types = keys.map { |k| k.is_a?(Array) ? k[1] : 0 }
    keys = keys.map { |k| k.is_a?(Array) ? k[0] : k }
    raise "key type" unless types.all? { |t| [0, 1, 2, 3, 5, 6, 7, 8].include?(t) }
    v = (out["views"][strings[name]] ||= { "description" => strings[desc], "unit" => strings[unit],
                                           "aggregation" => agg, "upper_inclusive" => agg == 6,
                                           "keys" => keys.map { |k| strings[k] },
                                           "bounds" => bounds, "rows" => [] })
    # The overflow row has no tag values; tag it as OpenTelemetry does.
    tagged = rows_of(version, agg, keys.size, bounds.size, rows).map { |row| [row, keys.size, nil] }
    tagged << [overflow, 0, { "otel.metric.overflow" => "true" }] unless overflow.nil?
    tagged.each do |row, n, tags|
      nd = data_len(agg)
      # A row, the overflow row too, may end with its own start.
      raise "bad row length" unless [n + nd, n + nd + 1].include?(row.size)
      values, data = row[0, n], row[n, nd]
      r = { "tags" => tags || keys.zip(values).reject { |_, val| val == 0 }.to_h { |k, val| [strings[k], strings[val]] } }
      r["start"] = row[-1].utc.iso8601(9) if row.size == n + nd + 1
      if tags.nil? && types.any?(&:positive?)
        r["typed"] = keys.zip(types, values).reject { |_, t, val| val == 0 || t == 0 }
                         .to_h { |k, t, val| [strings[k], typed(t, strings[val])] }
      end
      case agg
      when 1 then r["count"] = data[0]
      when 2, 5 then r["sum"] = data[0] # 5: an up-down sum, always its total
      when 4 then r["value"] = data[0]
      when 3, 6
        count, total, mn, mx, ssd, buckets = data
        raise "bad buckets" unless buckets.size == bounds.size + 1 && buckets.sum == count
        r.merge!("count" => count, "sum" => total, "min" => mn, "max" => mx, "sum_sq_dev" => ssd, "buckets" => buckets)
      when EXP
        count, total, mn, mx, scale, zero, poff, pos, noff, neg = data
        raise "scale #{scale.inspect}" unless scale.is_a?(Integer) && (-10..20).cover?(scale)
        r.merge!("count" => count, "sum" => total, "min" => mn, "max" => mx, "scale" => scale, "zero_count" => zero,
                 "positive" => exp_range(poff, pos, "positive"), "negative" => exp_range(noff, neg, "negative"))
        raise "zero count and bucket counts do not add up to count" unless zero + pos.sum + neg.sum == count
      when SUMMARY
        count, total, qvalues = data
        raise "summary count is not unsigned" unless count.is_a?(Integer) && count >= 0
        raise "quantile values: not one per quantile" unless qvalues.is_a?(Array) && qvalues.size == bounds.size
        r.merge!("count" => count, "sum" => total, "quantiles" => bounds.zip(qvalues))
      end
      v["rows"] << r
    end
  end
  out
end

merged = nil
payloads(File.binread(ARGV[0])).each do |raw|
  p = decode(raw)
  merged = p.merge("parts" => 0, "views" => {}) if merged.nil? || p["sequence"] != merged["sequence"]
  merged["parts"] += 1
  p["views"].each do |name, v|
    m = (merged["views"][name] ||= v.merge("rows" => []))
    m["rows"].concat(v["rows"])
  end
end
puts JSON.generate(merged)
