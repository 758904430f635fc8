package otel

// FastOptionPath reports whether the WithAttributeSet fast path is on.
func FastOptionPath() bool { return addOptTab != nil && recOptTab != nil }

// SetCollectWaitHook sets the function Collect calls when it finds a
// callback running and waits for it (nil: none).
func SetCollectWaitHook(f func()) { collectWaitHook = f }
