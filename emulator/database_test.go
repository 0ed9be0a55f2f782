package emulator

import (
	"strings"
	"testing"
)

// TestDatabaseSetting: --database, TABLEEMU_DATABASE and AZURITE_DB, in
// that order; only PostgreSQL URLs; and the password never in an error.
func TestDatabaseSetting(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	const secret = "s3cr%2Ft"
	for _, tc := range []struct {
		name    string
		args    []string
		env     func(string) string
		want    string // Config.Database
		wantErr string // part of the error
	}{
		{"flag", []string{"--database", "postgres://u@127.0.0.1:5432/db"}, env(), "postgres://u@127.0.0.1:5432/db", ""},
		{"postgresql scheme", []string{"--database", "postgresql://u@h/db?sslmode=disable"}, env(), "postgresql://u@h/db?sslmode=disable", ""},
		{"TABLEEMU_DATABASE", nil, env("TABLEEMU_DATABASE", "postgres://a@h/x"), "postgres://a@h/x", ""},
		{"AZURITE_DB", nil, env("AZURITE_DB", "postgres://b@h/y"), "postgres://b@h/y", ""},
		{"flag first", []string{"--database", "postgres://f@h/z"}, env("TABLEEMU_DATABASE", "postgres://a@h/x", "AZURITE_DB", "postgres://b@h/y"), "postgres://f@h/z", ""},
		{"TABLEEMU_DATABASE before AZURITE_DB", nil, env("TABLEEMU_DATABASE", "postgres://a@h/x", "AZURITE_DB", "postgres://b@h/y"), "postgres://a@h/x", ""},
		{"mysql", nil, env("AZURITE_DB", "mysql://root:"+secret+"@127.0.0.1:3306/azurite"), "", "AZURITE_DB mysql://root:xxxxx@127.0.0.1:3306/azurite: tableemu's external database is PostgreSQL"},
		{"other scheme", []string{"--database", "sqlserver://sa:" + secret + "@h/db"}, env(), "", "takes postgres:// or postgresql:// URLs"},
		{"no database name", []string{"--database", "postgres://u:" + secret + "@h:5432"}, env(), "", "name the database after the host"},
		{"not a URL", []string{"--database", "host=h password=" + secret}, env(), "", "want a URL such as postgres://"},
		{"with memory", []string{"--database", "postgres://u@h/db", "--inMemoryPersistence"}, env(), "", "choose one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(tc.args, tc.env, nil)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr") {
					t.Fatalf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil || c.Database != tc.want {
				t.Fatalf("Database %q, error %v; want %q", c.Database, err, tc.want)
			}
			if c.Location != "" || c.InMemory {
				t.Errorf("Location %q InMemory %v: with a database neither applies", c.Location, c.InMemory)
			}
		})
	}
	c, err := LoadConfig([]string{"--database", "postgres://u@h/db", "--location", "/data"}, env(), nil)
	if err != nil || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "--location is ignored") {
		t.Errorf("--location with --database: %v %q, want one warning", err, c.Warnings)
	}
}

func TestRedactDatabase(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://tableemu:hunter2@db:5432/t?sslmode=require": "postgres://tableemu:xxxxx@db:5432/t?sslmode=require",
		"postgres://tableemu@db/t?password=hunter2":             "postgres://tableemu@db/t?password=xxxxx",
		"postgres://db/t":          "postgres://db/t",
		"host=db password=hunter2": "(the database setting)",
	} {
		if got := RedactDatabase(in); got != want {
			t.Errorf("RedactDatabase(%q) = %q, want %q", in, got, want)
		}
	}
	c := Config{Database: "postgres://u:p%40ss@h/db?password=other"}
	if got := c.Redact(`connect to u:p%40ss@h (p@ss) failed; password=other`); strings.Contains(got, "p@ss") || strings.Contains(got, "p%40ss") || strings.Contains(got, "other") {
		t.Errorf("Redact left the password: %q", got)
	}
}
