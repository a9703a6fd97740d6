//go:build unix

package transport

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup puts the process in a new process group whose id is its
// pid, so that signals can reach its descendants too.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminate sends SIGTERM to the process group.
func terminate(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGTERM) }

// kill sends SIGKILL to the process group.
func kill(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }

// killOrphans kills what is left of the process group of the reaped
// process pid. The group id cannot have been reused while a member lives;
// when none does, the call fails harmlessly with ESRCH.
func killOrphans(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

// exitSignal returns the signal that ended the process, or 0.
func exitSignal(st *os.ProcessState) syscall.Signal {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}
