package azuritetest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStartStop: Azurite starts, listens, and on Stop saves its table
// database where the importer looks for it.
func TestStartStop(t *testing.T) {
	a := Start(t, "", nil)
	a.Stop(t)
	if _, err := os.Stat(filepath.Join(a.Dir, "__azurite_db_table__.json")); err != nil {
		t.Errorf("no table database after Stop: %v", err)
	}
	a.Stop(t) // harmless
}
