// Package migration is the worked example of docs/migrating-from-opencensus.md.
//
// before/service.go is a small instrumented program (an HTTP middleware and a
// job queue with its worker: a latency distribution, a request count, a byte
// sum, a queue-depth last value, tag keys route, method, status and queue)
// written against go.opencensus.io v0.24.0. after/service.go is the same file
// after the doc's import rewrite, and nothing else.
//
// The tests check that after/ is exactly the rewrite of before/ (the sed
// expressions are read from the doc itself, then gofmt), then run both
// programs on the same seeded requests and jobs and compare what
// view.RetrieveData and their exporters return, row by row: counts and
// bucket counts exactly, float statistics to 1e-9 relative, allowing only the
// doc's deliberate differences.
package migration
