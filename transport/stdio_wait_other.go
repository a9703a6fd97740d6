//go:build !linux && !windows

package transport

import "os/exec"

// waitProcess reaps cmd's process once it has exited: os/exec's Wait,
// which blocks an OS thread until then.
func waitProcess(cmd *exec.Cmd) error { return cmd.Wait() }
