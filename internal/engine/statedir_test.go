package engine

import (
	"testing"

	"github.com/conduitmcp/conduit/internal/wintest"
)

// stateDir is the directory of a stdio server's state file: a temporary
// directory that Wine can remove (see wintest.TempDir).
func stateDir(t *testing.T) string { return wintest.TempDir(t) }
