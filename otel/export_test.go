package otel

// FastOptionPath reports whether the WithAttributeSet fast path is on.
func FastOptionPath() bool { return addOptTab != nil && recOptTab != nil }
