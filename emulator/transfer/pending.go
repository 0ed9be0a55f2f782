package transfer

// PENDING (room A2, until the JSON Lines room's jsonl.go is merged): the
// pieces of the JSON Lines format that http.go and client.go use, with
// the names and signatures jsonl.go gives them (a line's encoding and
// decoding, the manifest and its policies, OpenDir, NewDirSink), written
// here minimally so that the endpoints compile and their tests of routing
// and refusals run. At the merge this file is deleted.

import (
	"errors"
	"time"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/wire"
)

// ManifestName is the manifest's file name in an export's directory.
const ManifestName = "tableemu.json"

const manifestFormat = "tableemu-jsonl/1"

type manifest struct {
	Format            string          `json:"format"`
	Account           string          `json:"account,omitempty"`
	ServiceProperties string          `json:"serviceProperties,omitempty"`
	Tables            []manifestTable `json:"tables"`
}

type manifestTable struct {
	Name string      `json:"name"`
	File string      `json:"file"`
	ACL  []policyDoc `json:"acl,omitempty"`
}

type policyDoc struct {
	ID         string `json:"id"`
	Start      string `json:"start,omitempty"`
	Expiry     string `json:"expiry,omitempty"`
	Permission string `json:"permission,omitempty"`
}

func (mt manifestTable) policies() ([]store.SignedIdentifier, error) {
	if mt.ACL == nil {
		return nil, nil
	}
	out := make([]store.SignedIdentifier, 0, len(mt.ACL))
	for _, p := range mt.ACL {
		si := store.SignedIdentifier{ID: p.ID, Permission: p.Permission}
		for _, f := range []struct {
			v string
			t *time.Time
		}{{p.Start, &si.Start}, {p.Expiry, &si.Expiry}} {
			if f.v == "" {
				continue
			}
			t, err := time.Parse(time.RFC3339Nano, f.v)
			if err != nil {
				return nil, err
			}
			*f.t = t
		}
		out = append(out, si)
	}
	return out, nil
}

func formatPolicyTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// decodeLine reads one line's entity.
func decodeLine(b []byte) (Entity, error) {
	d, err := wire.DecodeEntity(b)
	if err != nil {
		return Entity{}, err
	}
	if !d.HasPartitionKey || !d.HasRowKey {
		return Entity{}, tableemu.New(tableemu.PropertiesNeedValue).WithDetail("an entity needs a PartitionKey and a RowKey, as strings")
	}
	return Entity{Entity: &d.Entity}, nil
}

const maxLine = 4 << 20

// lineOptions encode an entity as a line.
var lineOptions = wire.Options{Level: wire.FullMetadata}

func entityError(sentinel error, err error, table, where string) error {
	e := tableemu.From(err)
	return e.WithHint("%s: %s. Nothing of table %s was imported: fix the entity and import again.", where, e.Detail, table)
}

// ErrInvalidEntity is the JSON Lines room's sentinel.
var ErrInvalidEntity = errors.New("invalid entity")

var errPending = errors.New("transfer: JSON Lines files are not built yet (pending the JSON Lines room)")

// OpenDir opens a directory of JSON Lines files, or one such file.
func OpenDir(path string) (Source, error) { return nil, errPending }

// NewDirSink writes an export into the directory path.
func NewDirSink(path string, overwrite bool) (Sink, error) { return nil, errPending }
