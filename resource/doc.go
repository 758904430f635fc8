// Package resource describes the entity a meter's data is about — a
// process, a container, a Kubernetes pod — with the API of OpenCensus's
// go.opencensus.io/resource (v0.24.0), so that a program migrating from
// OpenCensus only rewrites its imports: Resource{Type, Labels}, the
// Detector functions FromEnv and MultiDetector, EncodeLabels and
// DecodeLabels, and the OC_RESOURCE_TYPE and OC_RESOURCE_LABELS
// variables, with OpenCensus's semantics (checked against it in
// benchmarks/parity). view.Meter.SetResource takes a *Resource; the
// OpenCensus bridge (module bridge/opencensus) sets it on the meter's
// metrics as OpenCensus does. Subpackage resourcekeys holds the
// well-known type and label names.
//
// Nothing here is on a record path: detecting, encoding and decoding
// allocate and cost microseconds, once at start-up. A Resource is plain
// data: safe for concurrent reads, not for a write concurrent with
// anything.
package resource
