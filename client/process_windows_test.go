//go:build windows

package client_test

import "github.com/conduitmcp/conduit/internal/wintest"

// processExists reports whether pid names a process that has not exited.
func processExists(pid int) bool { return wintest.Running(pid) }
