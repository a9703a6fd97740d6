//go:build windows

package transport_test

// exitWaitUnsupported reports why a server's exit cannot be awaited
// without a thread here: it always can on Windows.
func exitWaitUnsupported() error { return nil }
