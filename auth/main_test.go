package auth

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(lockHolderEnv); path != "" {
		os.Exit(runLockHolder(path))
	}
	if os.Getenv(helperEnv) != "" {
		os.Exit(runHelper())
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m))
}
