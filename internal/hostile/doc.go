// Package hostile is the one hostile workload the backend tests push
// through every path (exporter/remotewrite's TestBackendEveryPathAgrees,
// collector/e2e's TestCollectorHostile): values on every bound under
// both bucket rules, negative values, NaN, +Inf and -Inf, escaping in tag
// values, constant labels and descriptions, and two views whose
// Prometheus names collide. For tests only: Register touches the global
// view registry and records into it; not for concurrent use with another
// Register of the same prefix.
package hostile
