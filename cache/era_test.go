package cache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/internal/wintest"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// TestFileEraStore: records survive in the file (read by a second
// store on the same path, its directory created), deletes persist and
// touch nothing else.
func TestFileEraStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(wintest.TempDir(t), "sub", "eras.json") // Wine cannot remove a t.TempDir
	a := cache.NewFileEraStore(path)
	if _, ok, err := a.LoadEra(ctx, "x"); ok || err != nil {
		t.Fatalf("LoadEra on an empty cache = %v, %v", ok, err)
	}
	rec := cache.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}
	mustOK(t, a.StoreEra(ctx, "x", rec))
	mustOK(t, a.StoreEra(ctx, "y", cache.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618}))
	b := cache.NewFileEraStore(path) // a second instance reads the file
	got, ok, err := b.LoadEra(ctx, "x")
	if !ok || got != rec || err != nil {
		t.Errorf("LoadEra(x) = %+v, %v, %v; want %+v", got, ok, err, rec)
	}
	mustOK(t, b.DeleteEra(ctx, "x"))
	if _, ok, _ := a.LoadEra(ctx, "x"); ok {
		t.Error("deleted record still present")
	}
	if _, ok, _ := a.LoadEra(ctx, "y"); !ok {
		t.Error("unrelated record lost")
	}
}

// TestFileEraStoreHashesKeys: a stdio server's key is its command line,
// whose arguments often carry tokens; the file holds a hash of it, never
// the argument, and a plain-text key an older version wrote is dropped at
// the next write.
func TestFileEraStoreHashesKeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(wintest.TempDir(t), "eras.json")
	old := `{"stdio:server --token OLD-SECRET": {"era": "legacy", "version": "2025-06-18"}}`
	mustOK(t, os.WriteFile(path, []byte(old), 0o600))
	s := cache.NewFileEraStore(path)
	key := "stdio:server --token=SECRET-ARGUMENT"
	mustOK(t, s.StoreEra(ctx, key, cache.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618}))
	b, err := os.ReadFile(path)
	mustOK(t, err)
	for _, secret := range []string{"SECRET-ARGUMENT", "OLD-SECRET", "--token"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("era file holds %q:\n%s", secret, b)
		}
	}
	if !strings.Contains(string(b), cache.HashKey(key)) {
		t.Errorf("era file lacks the key's hash %s:\n%s", cache.HashKey(key), b)
	}
	if _, ok, _ := s.LoadEra(ctx, key); !ok {
		t.Error("record not found by its key")
	}
}

// TestFileEraStoreWriteError: a store that cannot write says so.
func TestFileEraStoreWriteError(t *testing.T) {
	dir := wintest.TempDir(t)
	blocker := filepath.Join(dir, "file")
	mustOK(t, os.WriteFile(blocker, nil, 0o600))
	s := cache.NewFileEraStore(filepath.Join(blocker, "eras.json")) // its directory is a file
	if err := s.StoreEra(context.Background(), "x", cache.EraRecord{Era: negotiation.EraLegacy}); err == nil {
		t.Error("StoreEra under a file = nil, want an error")
	}
}

// TestFileEraStoreCorruptFile: a file that is not a JSON object of
// records reads as empty, and a store replaces it with one that holds
// the new record.
func TestFileEraStoreCorruptFile(t *testing.T) {
	ctx := context.Background()
	dir := wintest.TempDir(t)
	for i, content := range []string{"null", "[1,2]", `{"x": 5}`, "{", "\x00garbage", ""} {
		path := filepath.Join(dir, fmt.Sprintf("eras%d.json", i))
		mustOK(t, os.WriteFile(path, []byte(content), 0o600))
		s := cache.NewFileEraStore(path)
		if _, ok, err := s.LoadEra(ctx, "x"); ok || err != nil {
			t.Errorf("file %q: LoadEra = %v, %v; want nothing", content, ok, err)
		}
		mustOK(t, s.DeleteEra(ctx, "x"))
		rec := cache.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618}
		if err := s.StoreEra(ctx, "x", rec); err != nil {
			t.Errorf("file %q: StoreEra = %v", content, err)
			continue
		}
		if got, ok, err := cache.NewFileEraStore(path).LoadEra(ctx, "x"); !ok || got != rec || err != nil {
			t.Errorf("file %q: LoadEra after a store = %+v, %v, %v; want %+v", content, got, ok, err, rec)
		}
	}
}

// TestMemoryEraStore: a zero store is empty; stores replace, deletes
// forget, and deleting a missing key is no error.
func TestMemoryEraStore(t *testing.T) {
	ctx := context.Background()
	s := cache.NewMemoryEraStore()
	if _, ok, _ := s.LoadEra(ctx, "x"); ok {
		t.Fatal("empty store has a record")
	}
	mustOK(t, s.DeleteEra(ctx, "x"))
	mustOK(t, s.StoreEra(ctx, "x", cache.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618}))
	rec := cache.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}
	mustOK(t, s.StoreEra(ctx, "x", rec))
	if got, ok, _ := s.LoadEra(ctx, "x"); !ok || got != rec {
		t.Errorf("LoadEra(x) = %+v, %v; want %+v", got, ok, rec)
	}
	mustOK(t, s.DeleteEra(ctx, "x"))
	if _, ok, _ := s.LoadEra(ctx, "x"); ok {
		t.Error("deleted record still present")
	}
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
