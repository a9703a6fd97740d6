//go:build windows

package transport

import (
	"sync"

	"golang.org/x/sys/windows"
)

// RefuseJobs makes putting a server in a job fail with ERROR_ACCESS_DENIED,
// as it does for a host whose own job forbids nesting, until the returned
// function is called. The once-only warning is armed again.
func RefuseJobs() (restore func()) {
	noJobOnce = sync.Once{}
	assignProcess = func(windows.Handle, int) error { return windows.ERROR_ACCESS_DENIED }
	return func() { assignProcess = assignToJob }
}
