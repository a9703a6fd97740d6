//go:build windows

package transport

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The server's process tree on Windows is a job object created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and without breakaway: every process
// the server starts is in it, and terminating the job (or closing its
// last handle) ends them all.
//
// The process must be in the job before it runs, or a grandchild started
// at once could escape. os/exec cannot create a process directly in a job
// (SysProcAttr has no PROC_THREAD_ATTRIBUTE_JOB_LIST), so the process is
// created suspended (CREATE_SUSPENDED), assigned to the job, then resumed.
// Assigning right after an unsuspended Start would race with the child's
// first CreateProcess. Resuming needs the handle of the initial thread,
// which os/exec closes; it is found with a Toolhelp32 thread snapshot
// (documented API) rather than with ntdll's NtResumeProcess (undocumented):
// a suspended new process has exactly one thread, and its id cannot be
// reused while the process, which we hold, has not run.

// prepareTree makes the process start suspended (see startTree) and in a
// process group of its own, so that CTRL_BREAK_EVENT can be sent to it
// alone. A host without a console (a GUI application) starts it without
// a console window, which would otherwise pop up for every server. A
// batch file is run through cmd.exe (see batchCommandLine).
func prepareTree(cmd *exec.Cmd) error {
	flags := uint32(windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP)
	if !hasConsole() {
		flags |= windows.CREATE_NO_WINDOW
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
	return batchCommandLine(cmd)
}

var procGetConsoleWindow = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleWindow")

// hasConsole reports whether this process has a console window.
func hasConsole() bool {
	if procGetConsoleWindow.Find() != nil {
		return false
	}
	w, _, _ := procGetConsoleWindow.Call()
	return w != 0
}

// procTree is the server's process and its job object.
type procTree struct {
	p      *os.Process
	pid    int
	job    windows.Handle // 0 when the process could not be put in a job
	logger *slog.Logger
}

// noJobOnce makes the limitation of a host whose own job forbids nesting
// be logged once per process, not once per server.
var noJobOnce sync.Once

// startTree puts the suspended process cmd started in a new job object
// and resumes it. When the process cannot be put in a job (the host runs
// in a job that allows neither nesting nor breakaway), the server runs
// anyway and only the process itself is stopped; that is logged once.
func startTree(cmd *exec.Cmd, logger *slog.Logger) (*procTree, error) {
	t := &procTree{p: cmd.Process, pid: cmd.Process.Pid, logger: logger}
	job, err := newKillOnCloseJob()
	if err == nil {
		err = assignProcess(job, t.pid)
		if err != nil {
			windows.CloseHandle(job)
		} else {
			t.job = job
		}
	}
	if err != nil {
		noJobOnce.Do(func() {
			logger.Warn("transport: cannot put the server in a job object (this process's job forbids it); Close stops only the server's own process, not what it started", "pid", t.pid, "err", err)
		})
	}
	if err := resumeProcess(uint32(t.pid)); err != nil {
		t.release()
		return nil, fmt.Errorf("resuming the process: %w", err)
	}
	return t, nil
}

// newKillOnCloseJob creates an unnamed job object that ends its processes
// when its last handle is closed. Breakaway is not allowed.
func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("SetInformationJobObject: %w", err)
	}
	return job, nil
}

// assignProcess is assignToJob; a test replaces it to see a refusal.
var assignProcess = assignToJob

// assignToJob assigns process pid to job. The pid is that of a process we
// started and have not reaped, so it names that process.
func assignToJob(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fmt.Errorf("OpenProcess: %w", err)
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		return fmt.Errorf("AssignProcessToJobObject: %w", err)
	}
	return nil
}

// resumeProcess resumes the threads of the suspended process pid (it has
// one: the initial thread).
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("CreateToolhelp32Snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("OpenThread: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("ResumeThread: %w", err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("Thread32Next: %w", err)
	}
	if resumed == 0 {
		return errors.New("no thread of the process found")
	}
	return nil
}

// interrupt sends CTRL_BREAK_EVENT to the process group of the server
// (its pid, see prepareTree). It fails when the server does not share
// this process's console (a host without one, a server that is not a
// console program) and under Wine, which does not implement it; the
// ladder then goes on to terminate the job.
func (t *procTree) interrupt() error {
	return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(t.pid))
}

// kill terminates the job: the server and every process it started. Its
// exit code is 1, as with os.Process.Kill. Without a job only the server's
// own process is killed.
func (t *procTree) kill() error {
	if t.job == 0 {
		return t.p.Kill()
	}
	return windows.TerminateJobObject(t.job, 1)
}

// killRest terminates what is left in the job once the server exited.
func (t *procTree) killRest() {
	if t.job != 0 {
		windows.TerminateJobObject(t.job, 1)
	}
}

// release closes the job's handle, which also ends what is left in it
// (kill on close).
func (t *procTree) release() {
	if t.job != 0 {
		windows.CloseHandle(t.job)
		t.job = 0
	}
}

// exitSignal returns 0: exit signals are a Unix notion.
func exitSignal(*os.ProcessState) syscall.Signal { return 0 }

// stdioPipe returns a pipe for one of the child's streams. Our end is
// opened for overlapped I/O, so that its read and write deadlines work (a
// cancelled Write returns; the readers stop at the drain deadline), which
// os.Pipe's anonymous pipes do not allow. The child's end is ordinary
// synchronous I/O, which is what programs expect of their standard
// streams. The pipe's name is random, only the current user may open it,
// and it takes one client, which we connect at once.
func stdioPipe(childReads bool) (r, w *os.File, err error) {
	sa, err := pipeSecurity()
	if err != nil {
		return nil, nil, err
	}
	var rnd [12]byte
	rand.Read(rnd[:])
	name, err := windows.UTF16PtrFromString(`\\.\pipe\conduit-stdio-` + hex.EncodeToString(rnd[:]))
	if err != nil {
		return nil, nil, err
	}
	ourAccess, childAccess := uint32(windows.PIPE_ACCESS_INBOUND), uint32(windows.GENERIC_WRITE)
	if childReads {
		ourAccess, childAccess = windows.PIPE_ACCESS_OUTBOUND, windows.GENERIC_READ
	}
	const bufSize = 64 << 10
	ours, err := windows.CreateNamedPipe(name,
		ourAccess|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, bufSize, bufSize, 0, sa)
	if err != nil {
		return nil, nil, os.NewSyscallError("CreateNamedPipe", err)
	}
	child, err := windows.CreateFile(name, childAccess, 0, nil, windows.OPEN_EXISTING, 0, 0)
	if err != nil {
		windows.CloseHandle(ours)
		return nil, nil, os.NewSyscallError("CreateFile", err)
	}
	of, cf := os.NewFile(uintptr(ours), "|0"), os.NewFile(uintptr(child), "|1")
	if childReads {
		return cf, of, nil
	}
	return of, cf, nil
}

// pipeSecurity returns the security attributes of the stdio pipes: a
// protected DACL that lets the current user alone open them (the default
// one lets everyone read).
var pipeSecurity = sync.OnceValues(func() (*windows.SecurityAttributes, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, os.NewSyscallError("GetTokenUser", err)
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;" + tu.User.Sid.String() + ")")
	if err != nil {
		return nil, os.NewSyscallError("ConvertStringSecurityDescriptorToSecurityDescriptor", err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	return sa, nil
})
