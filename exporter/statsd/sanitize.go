package statsd

import (
	"strings"
	"unicode/utf8"
)

// The sanitising rules (docs/metric-mapping.md, "StatsD and DogStatsD").
// Each rule keeps a set of bytes and turns every run of other bytes into
// one '_', so that no character of the protocol can end a field early:
//
//	field                      kept                         protocol characters it must not hold
//	metric name, namespace     A-Z a-z 0-9 _ .              ':' ends the name, '|' '@' '#' ',' newline
//	DogStatsD tag key          A-Z a-z 0-9 _ . - /          ':' splits key from value, ',' '|' newline
//	DogStatsD tag value        everything but ',' '|' and   ',' ends the tag, '|' the tag list, newline
//	                           control characters (valid     the line; ':' '@' '#' are kept: DogStatsD
//	                           UTF-8; invalid bytes become   parsers split a tag at its first ':' only
//	                           U+FFFD)                       and read '@' '#' only at a field's start
//	plain: folded key, value   A-Z a-z 0-9 _ -              '.' would add a path level in Graphite
//
// Names keep Datadog's metric-name alphabet ("ASCII alphanumerics,
// underscores, and periods; other characters are converted to
// underscores", https://docs.datadoghq.com/metrics/custom_metrics/#naming-custom-metrics).
// The OpenCensus-compatible names follow that exporter's own rule instead
// (ocName).

// nameByte reports whether b is kept in a metric name.
func nameByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '.'
}

// keyByte reports whether b is kept in a DogStatsD tag key.
func keyByte(b byte) bool { return nameByte(b) || b == '-' || b == '/' }

// segByte reports whether b is kept in a folded (plain StatsD) tag key or
// value: a Graphite path segment.
func segByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '_' || b == '-'
}

// alnumByte is the OpenCensus Datadog exporter's rule: its regexp
// [^a-zA-Z0-9]+ replaced by "_" (stats.go, sanitizeString).
func alnumByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// appendKept appends s with every run of bytes keep refuses replaced by
// one '_'. No allocation.
func appendKept(dst []byte, s string, keep func(byte) bool) []byte {
	run := false
	for i := 0; i < len(s); i++ {
		b := s[i]
		if keep(b) {
			dst = append(dst, b)
			run = false
			continue
		}
		if !run {
			dst = append(dst, '_')
			run = true
		}
	}
	return dst
}

// appendName appends a metric name (or a namespace) sanitised.
func appendName(dst []byte, s string) []byte { return appendKept(dst, s, nameByte) }

// appendTagKey appends a DogStatsD tag key sanitised; an empty key becomes
// "_" (a tag must not start with ':').
func appendTagKey(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, '_')
	}
	return appendKept(dst, s, keyByte)
}

// appendSegment appends a folded tag key or value (plain StatsD).
func appendSegment(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, '_')
	}
	return appendKept(dst, s, segByte)
}

// valueBad reports whether b may not stand in a DogStatsD tag value: ','
// ends the tag, '|' the tag list, a control character (newline, CR, NUL)
// the line or a parser's patience.
func valueBad(b byte) bool { return b == ',' || b == '|' || b < 0x20 || b == 0x7f }

// appendTagValue appends a DogStatsD tag value sanitised: each run of
// bytes valueBad refuses becomes one '_', invalid UTF-8 becomes U+FFFD.
// No allocation for valid UTF-8 (every tag value zerostat records is:
// package tag checks it).
func appendTagValue(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD") // allocates: invalid input only
	}
	run := false
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !valueBad(b) {
			dst = append(dst, b)
			run = false
			continue
		}
		if !run {
			dst = append(dst, '_')
			run = true
		}
	}
	return dst
}
