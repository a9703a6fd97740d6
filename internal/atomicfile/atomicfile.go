// Package atomicfile replaces files so that a reader sees the old content
// or the new, never a part: the token store of package auth and the era
// store of package cache write through it.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with b, readable and writable by its owner only
// (mode 0600 on Unix; on Windows a protected ACL that grants the current
// user alone): it writes and syncs a temporary file in the same directory,
// then renames it over path. On failure the temporary file is removed and
// path is unchanged.
func Write(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := ownerOnly(f); err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := replace(tmp, path); err != nil {
		return err
	}
	ok = true
	return nil
}

// Read reads path, a file that Write replaces. On Windows, opening it
// while another process renames a replacement over it fails with a
// sharing violation (or access denied) for that moment; Read retries that
// for up to the time Write's rename waits for readers. Elsewhere it is
// os.ReadFile.
func Read(path string) ([]byte, error) { return read(path) }
