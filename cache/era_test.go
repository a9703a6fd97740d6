package cache_test

import (
	"path/filepath"
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
	path := filepath.Join(wintest.TempDir(t), "sub", "eras.json") // Wine cannot remove a t.TempDir
	a := cache.NewFileEraStore(path)
	if _, ok := a.LoadEra("x"); ok {
		t.Fatal("empty cache has a record")
	}
	rec := cache.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}
	a.StoreEra("x", rec)
	a.StoreEra("y", cache.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618})
	b := cache.NewFileEraStore(path) // a second instance reads the file
	got, ok := b.LoadEra("x")
	if !ok || got != rec {
		t.Errorf("LoadEra(x) = %+v, %v; want %+v", got, ok, rec)
	}
	b.DeleteEra("x")
	if _, ok := a.LoadEra("x"); ok {
		t.Error("deleted record still present")
	}
	if _, ok := a.LoadEra("y"); !ok {
		t.Error("unrelated record lost")
	}
}

// TestMemoryEraStore: a zero store is empty; stores replace, deletes
// forget, and deleting a missing key is no error.
func TestMemoryEraStore(t *testing.T) {
	s := cache.NewMemoryEraStore()
	if _, ok := s.LoadEra("x"); ok {
		t.Fatal("empty store has a record")
	}
	s.DeleteEra("x")
	s.StoreEra("x", cache.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618})
	rec := cache.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}
	s.StoreEra("x", rec)
	if got, ok := s.LoadEra("x"); !ok || got != rec {
		t.Errorf("LoadEra(x) = %+v, %v; want %+v", got, ok, rec)
	}
	s.DeleteEra("x")
	if _, ok := s.LoadEra("x"); ok {
		t.Error("deleted record still present")
	}
}
