package otlp

import "github.com/zerostat/zerostat/internal/protowire"

// The OTLP encoder's protobuf writer is internal/protowire, shared with
// the Prometheus encoders; these names keep this package's spelling.
// Every field number the OTLP metrics messages use is below 16, so a
// field's tag (field<<3 | wire type) is one byte; the tags are written as
// constants next to the message they belong to (proto.go).
//
// Lengths of sub-messages are computed before the messages are written
// (see Encoder.appendMetric): nothing is reserved, back-patched or moved,
// except that the request's two outermost heads are written last, into
// room reserved before the metrics (see Encoder.Encode).

// Wire types.
const (
	wireVarint  = protowire.WireVarint
	wireFixed64 = protowire.WireFixed64
	wireBytes   = protowire.WireBytes
)

const maxVarint32Size = protowire.MaxVarint32Size

const fixedFieldSize = protowire.FixedFieldSize

func varintSize(v uint64) int                          { return protowire.VarintSize(v) }
func lenFieldSize(n int) int                           { return protowire.LenFieldSize(n) }
func appendLen(b []byte, tag byte, n int) []byte       { return protowire.AppendLen(b, tag, n) }
func appendString(b []byte, tag byte, s string) []byte { return protowire.AppendString(b, tag, s) }
func appendFixed(b []byte, tag byte, v uint64) []byte  { return protowire.AppendFixed(b, tag, v) }
