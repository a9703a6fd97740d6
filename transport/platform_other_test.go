//go:build !windows

package transport_test

import "testing"

// skipUnderWine skips t under Wine; elsewhere than on Windows there is no
// Wine to run under.
func skipUnderWine(testing.TB, string) {}
