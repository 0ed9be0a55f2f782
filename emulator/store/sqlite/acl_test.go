package sqlite

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestTableACL: policies round-trip in order with absent fields kept
// absent, lookups ignore the table name's case, a Set replaces the list,
// and deleting a table deletes its policies (through the foreign key) so a
// new table never inherits them.
func TestTableACL(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	start := time.Date(2021, 7, 8, 9, 10, 9, 123456789, time.UTC)
	expiry := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	ids := []SignedIdentifier{
		{ID: "full", Start: start, Expiry: expiry, Permission: "raud"},
		{ID: "empty"},
		{ID: "permOnly", Permission: "r"},
	}
	var tbl Table
	err := s.Update(ctx, func(tx *Tx) error {
		var err error
		if tbl, err = tx.CreateTable("acct", "MyTable"); err != nil {
			return err
		}
		return tx.SetTableACL(tbl, ids)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.View(ctx, func(tx *Tx) error {
		got, err := tx.TableACL(tbl)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, ids) {
			t.Errorf("TableACL = %+v, want %+v", got, ids)
		}
		si, ok, err := tx.AccessPolicy("acct", "mytable", "full")
		if err != nil || !ok || !si.Start.Equal(start) || !si.Expiry.Equal(expiry) || si.Permission != "raud" {
			t.Errorf("AccessPolicy(full) = %+v %v %v", si, ok, err)
		}
		for _, miss := range [][3]string{{"acct", "mytable", "FULL"}, {"acct", "other", "full"}, {"other", "mytable", "full"}} {
			if _, ok, err := tx.AccessPolicy(miss[0], miss[1], miss[2]); ok || err != nil {
				t.Errorf("AccessPolicy%v found a policy (err %v)", miss, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A Set replaces the whole list; an empty one clears it.
	err = s.Update(ctx, func(tx *Tx) error { return tx.SetTableACL(tbl, ids[1:2]) })
	if err != nil {
		t.Fatal(err)
	}
	s.View(ctx, func(tx *Tx) error {
		if got, _ := tx.TableACL(tbl); len(got) != 1 || got[0].ID != "empty" {
			t.Errorf("after replace: %+v", got)
		}
		return nil
	})

	// Delete the table and create another that reuses its id.
	err = s.Update(ctx, func(tx *Tx) error {
		if err := tx.DeleteTable("acct", "mytable"); err != nil {
			return err
		}
		n, err := tx.CreateTable("acct", "MyTable")
		if err != nil {
			return err
		}
		got, err := tx.TableACL(n)
		if len(got) != 0 || err != nil {
			t.Errorf("a new table inherited policies: %+v %v", got, err)
		}
		var rows int
		if err := tx.queryRow(`SELECT count(*) FROM table_acl`).Scan(&rows); err != nil {
			return err
		}
		if rows != 0 {
			t.Errorf("%d policy rows outlived their table", rows)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestServicePropertiesDoc(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	s.View(ctx, func(tx *Tx) error {
		if _, ok, err := tx.ServiceProperties("a"); ok || err != nil {
			t.Errorf("fresh account has a document (err %v)", err)
		}
		return nil
	})
	for _, doc := range []string{"<one/>", "<two/>"} {
		if err := s.Update(ctx, func(tx *Tx) error { return tx.SetServiceProperties("a", doc) }); err != nil {
			t.Fatal(err)
		}
		s.View(ctx, func(tx *Tx) error {
			if got, ok, err := tx.ServiceProperties("a"); !ok || err != nil || got != doc {
				t.Errorf("got %q %v %v, want %q", got, ok, err, doc)
			}
			if _, ok, _ := tx.ServiceProperties("b"); ok {
				t.Error("another account sees the document")
			}
			return nil
		})
	}
}
