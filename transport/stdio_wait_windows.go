//go:build windows

package transport

import (
	"os/exec"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/windows"
)

// waitProcess reaps cmd's process once it has exited. Until then the
// system's thread pool waits on a handle of the process
// (RegisterWaitForSingleObject; each of the pool's wait threads waits for
// up to 63 handles), and the goroutine waits on a channel: os/exec's Wait alone would keep one
// OS thread in WaitForSingleObject for the server's whole life. When the
// wait cannot be registered it is Wait alone.
func waitProcess(cmd *exec.Cmd) error {
	if exited, done := registerExitWait(cmd.Process.Pid); exited != nil {
		<-exited
		done()
	}
	return cmd.Wait()
}

var (
	procRegisterWaitForSingleObject = windows.NewLazySystemDLL("kernel32.dll").NewProc("RegisterWaitForSingleObject")
	procUnregisterWaitEx            = windows.NewLazySystemDLL("kernel32.dll").NewProc("UnregisterWaitEx")

	// exitCallback is the one callback of every registered wait
	// (callbacks are a limited resource of a process); its parameter is
	// the key of the wait's channel in exitWaits.
	exitCallbackOnce sync.Once
	exitCallback     uintptr
	exitWaits        sync.Map // uintptr → chan struct{}
	exitWaitSeq      atomic.Uintptr
)

const wtExecuteOnlyOnce = 0x00000008

// onProcessExit is the WAITORTIMERCALLBACK of the registered waits. It
// runs on a thread of the system's pool.
func onProcessExit(key, timedOut uintptr) uintptr {
	if ch, ok := exitWaits.LoadAndDelete(key); ok {
		close(ch.(chan struct{}))
	}
	return 0
}

// registerExitWait returns a channel closed once process pid has exited,
// and the function that releases the wait after that; nil when the wait
// could not be registered. pid is our child, not reaped yet, so it cannot
// name another process.
func registerExitWait(pid int) (<-chan struct{}, func()) {
	if procRegisterWaitForSingleObject.Find() != nil || procUnregisterWaitEx.Find() != nil {
		return nil, nil
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return nil, nil
	}
	exitCallbackOnce.Do(func() { exitCallback = windows.NewCallback(onProcessExit) })
	key := exitWaitSeq.Add(1)
	ch := make(chan struct{})
	exitWaits.Store(key, ch)
	var wait windows.Handle
	ok, _, _ := procRegisterWaitForSingleObject.Call(uintptr(unsafe.Pointer(&wait)), uintptr(h),
		exitCallback, key, uintptr(windows.INFINITE), wtExecuteOnlyOnce)
	if ok == 0 {
		exitWaits.Delete(key)
		windows.CloseHandle(h)
		return nil, nil
	}
	return ch, func() {
		// INVALID_HANDLE_VALUE: return once the callback has returned.
		procUnregisterWaitEx.Call(uintptr(wait), uintptr(windows.InvalidHandle))
		windows.CloseHandle(h)
	}
}
