//go:build !unix

package transport

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup does nothing here: without Unix process groups only the
// process itself is signalled. (Windows job objects would be the
// equivalent; not implemented.)
func setProcessGroup(cmd *exec.Cmd) {}

// terminate asks the process to stop; where interrupts cannot be sent
// (Windows) it fails and the ladder goes on to kill after KillDelay.
func terminate(p *os.Process) error { return p.Signal(os.Interrupt) }

// kill kills the process.
func kill(p *os.Process) error { return p.Kill() }

// killOrphans does nothing without process groups.
func killOrphans(pid int) {}

// exitSignal returns 0: exit signals are a Unix notion.
func exitSignal(st *os.ProcessState) syscall.Signal { return 0 }
