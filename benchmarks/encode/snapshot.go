// Package encode benchmarks zerostat's export path (snapshot + encode) on
// one snapshot of 20 views × 500 rows = 10,000 rows against other encoders
// of the same data: tinylib/msgp generated code, vmihailenco/msgpack,
// encoding/json and OTLP protobuf. It also measures gzip on the payloads
// and recording while an export runs. See ../README.md.
//
// This file holds the plain Go structs that mirror a zerostat payload's
// data for the other encoders. snapshot_gen.go is generated from it by
// tinylib/msgp v1.6.5 (go generate; the generated file is committed, and
// nothing depends on running the generator).
package encode

import "time"

//go:generate go run github.com/tinylib/msgp@v1.6.5 -file snapshot.go -o snapshot_gen.go -tests=false

// Snapshot is one export's data, as a zerostat payload carries it but with
// every string written in place (no string table).
type Snapshot struct {
	Start       time.Time   `msg:"start" msgpack:"start" json:"start"`
	End         time.Time   `msg:"end" msgpack:"end" json:"end"`
	Temporality uint8       `msg:"temporality" msgpack:"temporality" json:"temporality"`
	Sequence    uint64      `msg:"sequence" msgpack:"sequence" json:"sequence"`
	Resource    []Attribute `msg:"resource" msgpack:"resource" json:"resource"`
	Views       []View      `msg:"views" msgpack:"views" json:"views"`
}

// Attribute is a resource attribute.
type Attribute struct {
	Key   string `msg:"key" msgpack:"key" json:"key"`
	Value string `msg:"value" msgpack:"value" json:"value"`
}

// View is a view's metadata and rows. Aggregation is numbered as
// exporter/wire's (1 count, 2 sum, 3 distribution, 4 last value).
type View struct {
	Name        string    `msg:"name" msgpack:"name" json:"name"`
	Description string    `msg:"description" msgpack:"description" json:"description"`
	Unit        string    `msg:"unit" msgpack:"unit" json:"unit"`
	Aggregation uint8     `msg:"aggregation" msgpack:"aggregation" json:"aggregation"`
	Keys        []string  `msg:"keys" msgpack:"keys" json:"keys"`
	Bounds      []float64 `msg:"bounds" msgpack:"bounds" json:"bounds"`
	Start       time.Time `msg:"start" msgpack:"start" json:"start"`
	Rows        []Row     `msg:"rows" msgpack:"rows" json:"rows"`
}

// Rows and their distribution part are positional arrays in both
// MessagePack encoders (msgp's tuple directive, vmihailenco's as_array), as
// zerostat's rows are: 10,000 rows of field names would measure the
// schema, not the encoder.
//
//msgp:tuple Row Dist

// Row is one tag-value combination. Count is set for count and
// distribution views; Value is the sum (sum views, and a distribution's
// sum), or the last value; Dist is nil except for distributions.
type Row struct {
	_msgpack struct{} `msgpack:",as_array"` //nolint:unused // vmihailenco's array form

	Values []string `msg:"values" json:"values"`
	Count  uint64   `msg:"count" json:"count,omitempty"`
	Value  float64  `msg:"value" json:"value,omitempty"`
	Dist   *Dist    `msg:"dist" json:"dist,omitempty"`
}

// Dist is the rest of a distribution row.
type Dist struct {
	_msgpack struct{} `msgpack:",as_array"` //nolint:unused // vmihailenco's array form

	Min     float64  `msg:"min" json:"min"`
	Max     float64  `msg:"max" json:"max"`
	SumSq   float64  `msg:"sum_sq_dev" json:"sum_sq_dev"`
	Buckets []uint64 `msg:"buckets" json:"buckets"`
}
