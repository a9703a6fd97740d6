//go:build windows

package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/conduitmcp/conduit/internal/atomicfile"
	"github.com/conduitmcp/conduit/internal/wintest"
)

// checkOwnerOnly fails unless path's DACL is protected (inherits nothing)
// and holds one entry, which allows access to the current user alone.
// Wine does not keep a file's DACL (SetNamedSecurityInfo succeeds; the
// file keeps the entries Wine derives from its Unix mode), so there the
// check is skipped: the ACL is proven on Windows only.
func checkOwnerOnly(t *testing.T, path string) {
	t.Helper()
	if wintest.UnderWine() {
		t.Log("under Wine: file DACLs are not stored; the owner-only ACL is checked on Windows only")
		return
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatalf("GetNamedSecurityInfo: %v", err)
	}
	control, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	if control&windows.SE_DACL_PROTECTED == 0 {
		t.Errorf("the DACL is not protected: the directory's entries are inherited")
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		t.Fatalf("DACL = %v, %v; want one", dacl, err)
	}
	if dacl.AceCount != 1 {
		t.Fatalf("the DACL has %d entries, want 1 (the user's)", dacl.AceCount)
	}
	var ace *windows.ACCESS_ALLOWED_ACE
	if err := windows.GetAce(dacl, 0, &ace); err != nil {
		t.Fatal(err)
	}
	if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
		t.Errorf("the entry's type is %d, want ACCESS_ALLOWED", ace.Header.AceType)
	}
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	if sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)); !sid.Equals(tu.User.Sid) {
		t.Errorf("the entry is for %v, want the current user %v", sid, tu.User.Sid)
	}
}

// TestWriteWhileHeldOpen: a reader holds the file open (as another
// process reading the token store would), which makes renaming over it
// fail on Windows; Write waits until it is closed.
func TestWriteWhileHeldOpen(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "f.json")
	if err := atomicfile.Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	r, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		r.Close()
		close(closed)
	}()
	err = atomicfile.Write(path, []byte("new"))
	<-closed
	if err != nil {
		t.Fatalf("Write while a reader held the file = %v", err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "new" {
		t.Errorf("ReadFile = %q, %v; want new", b, err)
	}
}

// TestReadWhileHeldExclusively: another process holds the file without
// sharing it (as during the rename of a replacement over it), which makes
// opening it fail on Windows with a sharing violation; Read waits until
// it is released instead of failing (the auth store's cross-process
// refresh test met it under Wine).
func TestReadWhileHeldExclusively(t *testing.T) {
	path := filepath.Join(wintest.TempDir(t), "f.json")
	if err := atomicfile.Write(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(path); err == nil {
		windows.CloseHandle(h)
		t.Skip("this system shares a file opened with no sharing: nothing to wait for")
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		windows.CloseHandle(h)
		close(released)
	}()
	b, err := atomicfile.Read(path)
	<-released
	if err != nil || string(b) != "old" {
		t.Errorf("Read while the file was held = %q, %v; want old", b, err)
	}
}
