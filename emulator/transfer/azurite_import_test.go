package transfer

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/auth"
	"github.com/tableemu/tableemu/emulator/store"
	"github.com/tableemu/tableemu/emulator/transfer/azuritetest"
	"github.com/tableemu/tableemu/odata/edm"
)

// TestAzuriteImport is the whole path: a directory a real Azurite wrote,
// OpenAzurite, Import into a real store (a SQLite file; PostgreSQL when
// there is one), then Export: every entity is what was written to
// Azurite, every EDM type exactly, with the Timestamp Azurite gave it (so
// the ETag Azurite gave it), and so are the access policies and CORS
// rules.
func TestAzuriteImport(t *testing.T) {
	dir, want := writtenByAzurite(t)
	eachEngine(t, func(t *testing.T, st *store.Store) {
		tr := azuriteTransfer(st)
		src, err := OpenAzurite(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		sum, err := tr.Import(ctx, src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, tables := range want.entities {
			for _, es := range tables {
				total += len(es)
			}
		}
		if sum.Tables != 3 || sum.Entities != total {
			t.Errorf("imported %+v, want 3 tables and %d entities", sum, total)
		}

		for account, tables := range want.entities {
			var sink azSink
			if _, err := tr.Export(ctx, &sink, Options{Account: account}); err != nil {
				t.Fatal(err)
			}
			checkCors(t, Account{Name: account, Properties: sink.props}, want.cors[account])
			var names []string
			for _, tb := range sink.tables {
				names = append(names, tb.info.Name)
				if acl := want.acls[account+"/"+tb.info.Name]; !sameACL(tb.info.ACL, acl) {
					t.Errorf("%s/%s: ACL %+v, want %+v", account, tb.info.Name, tb.info.ACL, acl)
				}
				es := tables[tb.info.Name]
				if len(tb.entities) != len(es) {
					t.Errorf("%s/%s: %d entities exported, %d written", account, tb.info.Name, len(tb.entities), len(es))
				}
				for _, e := range tb.entities {
					w := es[e.PartitionKey+"\x00"+e.RowKey]
					where := "exported " + account + "/" + tb.info.Name + " (" + e.PartitionKey + ", " + e.RowKey + ")"
					if w == nil {
						t.Errorf("%s: not written", where)
						continue
					}
					checkEntity(t, Entity{Entity: e, Where: where, KeepTimestamp: true}, w)
				}
			}
			if len(names) != len(tables) {
				t.Errorf("%s: exported tables %v, written %d", account, names, len(tables))
			}
		}

		// Again: the tables are there, and the default mode refuses them
		// before writing anything.
		_, err = tr.Import(ctx, src, Options{})
		wantCode(t, err, ErrTableExists, tableemu.TableAlreadyExists, "already has table")
	})
}

// azuriteTransfer is the transfer of st with Azurite's two accounts of the
// tests; service properties are kept in the store as given, as
// newTransfer does.
func azuriteTransfer(st *store.Store) *Transfer {
	return New(Config{
		Store:      st,
		Accounts:   map[string]*auth.Account{"devstoreaccount1": {Name: "devstoreaccount1"}, secondName: {Name: secondName}},
		DevAccount: "devstoreaccount1",
		GetProps: func(ctx context.Context, account string) ([]byte, error) {
			var doc string
			err := st.View(ctx, func(tx *store.Tx) error {
				var err error
				doc, _, err = tx.ServiceProperties(account)
				return err
			})
			return []byte(doc), err
		},
		SetProps: func(ctx context.Context, account string, doc []byte) error {
			return st.Update(ctx, func(tx *store.Tx) error { return tx.SetServiceProperties(account, string(doc)) })
		},
	})
}

// sameACL compares policies, times by instant (a store may give them back
// in another location).
func sameACL(a, b []store.SignedIdentifier) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].Permission != b[i].Permission || !a[i].Start.Equal(b[i].Start) || !a[i].Expiry.Equal(b[i].Expiry) {
			return false
		}
	}
	return true
}

// azSink keeps what an export writes, copied.
type azSink struct {
	props  []byte
	tables []struct {
		info     TableInfo
		entities []*edm.Entity
	}
}

func (s *azSink) Properties(_ string, doc []byte) error {
	s.props = slices.Clone(doc)
	return nil
}

func (s *azSink) Table(t TableInfo) error {
	t.ACL = slices.Clone(t.ACL)
	s.tables = append(s.tables, struct {
		info     TableInfo
		entities []*edm.Entity
	}{info: t})
	return nil
}

func (s *azSink) Entity(e *edm.Entity) error {
	c := &edm.Entity{PartitionKey: strings.Clone(e.PartitionKey), RowKey: strings.Clone(e.RowKey), Timestamp: e.Timestamp}
	for _, p := range e.Properties {
		v := p.Value
		v.S, v.B = strings.Clone(v.S), slices.Clone(v.B)
		c.Properties = append(c.Properties, edm.Property{Name: strings.Clone(p.Name), Value: v})
	}
	s.tables[len(s.tables)-1].entities = append(s.tables[len(s.tables)-1].entities, c)
	return nil
}

func (s *azSink) Close() error { return nil }

// TestAzuriteImportRefusals: Azurite keeps entities the service refuses,
// as it checks few names and values. Their import fails with the
// service's code, naming the account, table and keys, and writes nothing
// of that table: a property name that is not an identifier (refused by
// Import's checks) and a DateTime that is not a date (refused as it is
// read).
func TestAzuriteImportRefusals(t *testing.T) {
	a := azuritetest.Start(t, "", nil)
	svc, err := aztables.NewServiceClientFromConnectionString(a.ConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for table, body := range map[string]string{
		"BadName": `{"PartitionKey":"p","RowKey":"bad name","bad-name":1}`,
		"BadDate": `{"PartitionKey":"p","RowKey":"bad date","When":"not a date","When@odata.type":"Edm.DateTime"}`,
	} {
		if _, err := svc.CreateTable(ctx, table, nil); err != nil {
			t.Fatal(err)
		}
		c := svc.NewClient(table)
		if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"good","N":1}`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := c.AddEntity(ctx, []byte(body), nil); err != nil {
			t.Fatalf("Azurite refused %s: %v", body, err)
		}
	}
	a.Stop(t)

	st := engines[0].open(t) // SQLite
	tr := azuriteTransfer(st)
	src, err := OpenAzurite(a.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]struct {
		code tableemu.Code
		says string
	}{
		"BadName": {tableemu.PropertyNameInvalid, "azurite: account devstoreaccount1, table BadName, entity (p, bad name)"},
		"BadDate": {tableemu.InvalidInput, "azurite: account devstoreaccount1, table BadDate, entity (p, bad date)"},
	} {
		_, err := tr.Import(ctx, src, Options{Tables: []string{table}})
		wantCode(t, err, ErrInvalidEntity, want.code, want.says, "Nothing of table "+table+" was imported")
		if sink := export(t, tr, "devstoreaccount1"); len(sink.lines) != 0 {
			t.Errorf("%s: the account holds %q after the failed import", table, sink.lines)
		}
	}
}
