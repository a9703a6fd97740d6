package einoconduit_test

import (
	"os"
	"testing"

	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	toolsettest.RemoveBinary()
	os.Exit(code)
}
