package tag

import "github.com/zerostat/zerostat/internal/core"

// TTL is the propagation metadata of a tag: whether Encode carries it to the
// next process.
type TTL struct {
	ttl int8
}

var (
	// TTLUnlimitedPropagation lets a tag propagate over any number of hops.
	// It is the default.
	TTLUnlimitedPropagation = TTL{ttl: core.TTLUnlimitedPropagation}
	// TTLNoPropagation keeps a tag in this process: Encode leaves it out.
	TTLNoPropagation = TTL{ttl: core.TTLNoPropagation}
)

// metadatas holds the metadata applied to one tag.
type metadatas struct {
	ttl TTL
}

// Metadata is an option of a mutator, applied once when the mutator is
// built.
type Metadata func(*metadatas)

// WithTTL sets the tag's propagation TTL.
func WithTTL(ttl TTL) Metadata {
	return func(m *metadatas) { m.ttl = ttl }
}

// createMetadatas follows OpenCensus (tag/map.go): with no metadata the TTL
// is unlimited; with some, it starts from the zero metadata (no propagation)
// and applies each non-nil one.
func createMetadatas(mds []Metadata) metadatas {
	if len(mds) == 0 {
		return metadatas{ttl: TTLUnlimitedPropagation}
	}
	var m metadatas
	for _, md := range mds {
		if md != nil {
			md(&m)
		}
	}
	return m
}
