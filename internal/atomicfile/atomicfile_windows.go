//go:build windows

package atomicfile

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// ownerOnly gives f a protected DACL (nothing inherited from the
// directory) with one entry: full access for the user this process runs
// as. The file mode bits of Unix have no meaning here.
func ownerOnly(f *os.File) error {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return &os.PathError{Op: "GetTokenUser", Path: f.Name(), Err: err}
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL,
		AccessMode:        windows.GRANT_ACCESS,
		Inheritance:       windows.NO_INHERITANCE,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_USER,
			TrusteeValue: windows.TrusteeValueFromSID(tu.User.Sid),
		},
	}}, nil)
	if err != nil {
		return &os.PathError{Op: "SetEntriesInAcl", Path: f.Name(), Err: err}
	}
	err = windows.SetNamedSecurityInfo(f.Name(), windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, acl, nil)
	if err != nil {
		return &os.PathError{Op: "SetNamedSecurityInfo", Path: f.Name(), Err: err}
	}
	return nil
}

// Renaming over a file that another process has open (a reader of the
// token store, an antivirus scanner) fails on Windows with access denied
// or a sharing violation until it is closed. replace retries that for up
// to replaceTimeout.
const replaceTimeout = 2 * time.Second

// replace renames tmp over path, retrying while path is held open.
func replace(tmp, path string) error {
	return retryHeld(func() error { return os.Rename(tmp, path) })
}

// read reads path, retrying while a replacement is renamed over it.
func read(path string) ([]byte, error) {
	var b []byte
	err := retryHeld(func() (err error) {
		b, err = os.ReadFile(path)
		return err
	})
	return b, err
}

// retryHeld runs op until it succeeds, fails otherwise than with access
// denied or a sharing violation (a file another process holds or is
// replacing), or replaceTimeout has passed.
func retryHeld(op func() error) error {
	deadline := time.Now().Add(replaceTimeout)
	wait := time.Millisecond
	for {
		err := op()
		if err == nil || !(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}
