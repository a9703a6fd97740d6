//go:build !unix

package transport

import "os"

// polledFile is nothing here: without a poller for pipes (Windows'
// anonymous pipes have none), no file is an idle source and a
// connection's buffer is kept.
type polledFile struct{}

// of returns nil.
func (*polledFile) of(*os.File) idleSource { return nil }
