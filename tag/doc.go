// Package tag holds the keys and immutable tag maps that label
// recordings, carried in a context.Context, and OpenCensus's binary tag
// codec for propagating them between processes.
//
// # Keys, maps and mutators
//
// A Key is created once, usually as a package-level variable with
// MustNewKey. A Map is an immutable set of key/value pairs; New derives a
// new one from the map in a context by applying Mutators (Insert, Update,
// Upsert, Delete) and returns a context carrying it. Keys and values are
// printable ASCII; keys are 1 to 255 bytes, values 0 to 255. A mutator is
// validated when it is built and its error reported when it is applied.
//
// # Costs
//
// Build a map once per tag combination and keep its context: a map
// remembers, for each view it was recorded into, the series it resolves
// to, so the next stats.Record with it costs one atomic load to find the
// series. New costs one allocation for up to 16 tags: its context, 24
// bytes, when the tag set was built recently (by any goroutine; a bounded
// cache of 4096 maps keeps them, so their series stay resolved), or the
// context, map and tags together for a new set. stats.RecordWithTags
// applies mutators to a stack copy of the tags instead of building a map
// (no allocation), and records through the cached map of a recurring set,
// or finds its series by hash.
//
// # Propagation
//
// Encode and Decode implement the OpenCensus binary format (version 0,
// field id 0, uvarint-prefixed key and value), so zerostat and OpenCensus
// processes read each other's tags. Tags inserted with
// WithTTL(TTLNoPropagation) stay in the process. Encode writes tags sorted
// by key, so equal maps encode to equal bytes.
//
// All functions and methods are safe for concurrent use.
package tag
