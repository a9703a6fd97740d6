//go:build !windows

package atomicfile

import "os"

// ownerOnly makes f readable and writable by its owner only.
func ownerOnly(f *os.File) error { return f.Chmod(0o600) }

// replace renames tmp over path.
func replace(tmp, path string) error { return os.Rename(tmp, path) }

func read(path string) ([]byte, error) { return os.ReadFile(path) }
