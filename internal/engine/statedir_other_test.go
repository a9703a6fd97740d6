//go:build !windows

package engine

import "testing"

// stateDir is the directory of a stdio server's state file.
func stateDir(t *testing.T) string { return t.TempDir() }
