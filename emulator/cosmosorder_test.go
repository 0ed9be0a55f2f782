package emulator

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tableemu/tableemu/emulator/transfer"
	"github.com/tableemu/tableemu/odata/edm"
)

// keySink is an export sink that keeps the entities' keys, in order.
type keySink struct{ keys []string }

func (s *keySink) Properties(string, []byte) error { return nil }
func (s *keySink) Table(transfer.TableInfo) error  { return nil }
func (s *keySink) Entity(e *edm.Entity) error {
	s.keys = append(s.keys, e.PartitionKey+"/"+e.RowKey)
	return nil
}
func (s *keySink) Close() error { return nil }

// TestCosmosCreationOrder: under the profile a partition's entities are
// answered in the order they were created: an update, merge, replace or
// upsert of an existing entity keeps its place, an upsert that inserts and
// an entity deleted and inserted again go last (python-cosmos
// test_batch_all_operations_together, test_decode_entity_atypical_values;
// docs/cosmos.md, "order of query results"); partitions by PartitionKey.
// Page by page ($top=1, Cosmos DB's continuation) and an export give the
// same order. Without the profile the same writes answer in key order.
func TestCosmosCreationOrder(t *testing.T) {
	for _, tc := range []struct{ profile, want string }{
		{ProfileCosmos, "p/c p/a p/0 p/b q/z q/y"},
		{ProfileStorage, "p/0 p/a p/b p/c q/y q/z"},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			s, err := New(Config{InMemory: true, Silent: true, Profile: tc.profile})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s)
			t.Cleanup(func() { hs.Close(); s.Close() })
			do := func(method, target, body string, hdr map[string]string) {
				t.Helper()
				if r := cosmosDo(t, hs, method, target, body, hdr); r.status >= 300 {
					t.Fatalf("%s %s: %d %s", method, target, r.status, r.body)
				}
			}
			do("POST", "/Tables", `{"TableName":"order"}`, nil)
			for _, k := range []string{"p/c", "p/a", "q/z", "p/b", "q/y"} {
				pk, rk, _ := strings.Cut(k, "/")
				do("POST", "/order", `{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","N":1}`, nil)
			}
			ifAny := map[string]string{"If-Match": "*"}
			do("PUT", "/order(PartitionKey='p',RowKey='c')", `{"N":2}`, ifAny)   // replace
			do("MERGE", "/order(PartitionKey='p',RowKey='a')", `{"M":2}`, ifAny) // merge
			do("PUT", "/order(PartitionKey='q',RowKey='z')", `{"N":3}`, nil)     // upsert of an existing entity
			do("PUT", "/order(PartitionKey='p',RowKey='0')", `{"N":4}`, nil)     // upsert that inserts
			do("DELETE", "/order(PartitionKey='p',RowKey='b')", "", ifAny)
			do("POST", "/order", `{"PartitionKey":"p","RowKey":"b"}`, nil)

			var got []string
			target := "/order()?$top=1"
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("the continuation does not advance")
				}
				r := cosmosDo(t, hs, "GET", target, "", nil)
				var page struct {
					Value []struct{ PartitionKey, RowKey string }
				}
				if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
					t.Fatalf("page %d: %d %s", pages, r.status, r.body)
				}
				for _, e := range page.Value {
					got = append(got, e.PartitionKey+"/"+e.RowKey)
				}
				npk := r.h.Get("x-ms-continuation-NextPartitionKey")
				if npk == "" {
					break
				}
				target = "/order()?$top=1&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(r.h.Get("x-ms-continuation-NextRowKey"))
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("pages of one: %s, want %s", strings.Join(got, " "), tc.want)
			}
			var sink keySink
			if _, err := s.Export(context.Background(), &sink, transfer.Options{Account: DevAccount}); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(sink.keys, " "); got != tc.want {
				t.Errorf("export: %s, want %s", got, tc.want)
			}
		})
	}
}

// TestCosmosNoFilterCache: under the profile the SQLite store keeps no
// filter cache (its queries read in creation order, which the cache does
// not keep) and no memory limit is set for one.
func TestCosmosNoFilterCache(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want int64
	}{
		{Config{}, DefaultCacheSize << 20},
		{Config{Profile: ProfileCosmos}, 0},
		{Config{Profile: ProfileCosmos, CacheSize: 64}, 0},
	} {
		if got := cacheBudget(tc.cfg); got != tc.want {
			t.Errorf("profile %q, --cacheSize %d: budget %d, want %d", tc.cfg.Profile, tc.cfg.CacheSize, got, tc.want)
		}
		if got := MemoryLimit(tc.cfg); (got == 0) != (tc.want == 0) {
			t.Errorf("profile %q: memory limit %d", tc.cfg.Profile, got)
		}
	}
}

// TestCreationOrderAcrossProfiles: one data directory served in turn
// without and with the profile. Entities written without it have no
// creation sequence: under the profile they come first in their
// partition, by RowKey, before those written under it, in the order
// created (docs/cosmos.md, "order of query results"); without the profile
// every entity answers in key order.
func TestCreationOrderAcrossProfiles(t *testing.T) {
	dir := t.TempDir()
	serve := func(profile string, writes []string, want string) {
		t.Helper()
		s, err := New(Config{Location: dir, Silent: true, Profile: profile})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(s)
		defer func() { hs.Close(); s.Close() }()
		for _, rk := range writes {
			if r := cosmosDo(t, hs, "PUT", "/order(PartitionKey='p',RowKey='"+rk+"')", `{}`, nil); r.status != 204 {
				t.Fatalf("%s: upsert %s: %d %s", profile, rk, r.status, r.body)
			}
		}
		r := cosmosDo(t, hs, "GET", "/order()", "", nil)
		var page struct{ Value []struct{ RowKey string } }
		if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
			t.Fatalf("%s: query: %d %s", profile, r.status, r.body)
		}
		var got []string
		for _, e := range page.Value {
			got = append(got, e.RowKey)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %s, want %s", profile, strings.Join(got, " "), want)
		}
	}
	s, err := New(Config{Location: dir, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	if r := cosmosDo(t, hs, "POST", "/Tables", `{"TableName":"order"}`, nil); r.status != 201 {
		t.Fatalf("Create Table: %d %s", r.status, r.body)
	}
	hs.Close()
	s.Close()
	serve(ProfileStorage, []string{"m", "b"}, "b m")
	serve(ProfileCosmos, []string{"z", "a"}, "b m z a")
	serve(ProfileStorage, []string{"c"}, "a b c m z")
	serve(ProfileCosmos, []string{"b", "y"}, "b c m z a y")
}
