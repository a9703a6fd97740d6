package transport

import (
	"runtime"
	"sync"
	"testing"
)

// TestPresizeStack: goroutines that called presizeStack hold stacks of
// 8 KiB, not the few KiB a goroutine starts with. It fails if the
// compiler drops the frame or the frame stops reaching 8 KiB.
func TestPresizeStack(t *testing.T) {
	const n = 128
	measure := func(presize bool) uint64 {
		var ready, started sync.WaitGroup
		release := make(chan struct{})
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.StackInuse
		for range n {
			ready.Add(1)
			started.Add(1)
			go func() {
				defer started.Done()
				if presize {
					presizeStack()
				}
				ready.Done()
				<-release
			}()
		}
		ready.Wait()
		runtime.ReadMemStats(&ms)
		after := ms.StackInuse
		close(release)
		started.Wait()
		if after < before {
			return 0
		}
		return after - before
	}
	got := measure(true)
	// StackInuse counts the runtime's spans of stacks, not stacks: the
	// bound leaves a quarter for stacks the goroutines found free.
	if min := uint64(n * 6 << 10); got < min {
		t.Errorf("%d presized goroutines added %d bytes of stack (without presizing: %d), want at least %d", n, got, measure(false), min)
	}
}
