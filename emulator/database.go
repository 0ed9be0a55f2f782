package emulator

import (
	"fmt"
	"net/url"
	"strings"
)

// An external database (docs/postgres.md): --database, TABLEEMU_DATABASE,
// or Azurite's AZURITE_DB, in that order. Azurite takes a MySQL URL in
// AZURITE_DB for its blob and queue metadata (its README, "Azurite
// Supports SQL based Metadata Storage"); tableemu's external database is
// PostgreSQL, or an engine that speaks its protocol.

// databaseFromEnv picks the database URL and says where it came from, for
// error messages. flagValue is --database as given.
func databaseFromEnv(flagValue string, getenv func(string) string) (value, source string) {
	if flagValue != "" {
		return flagValue, "--database"
	}
	for _, name := range []string{"TABLEEMU_DATABASE", "AZURITE_DB"} {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, name
		}
	}
	return "", ""
}

// checkDatabase validates a database URL and returns an error that names
// the setting but never the password.
func checkDatabase(raw, source string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" && !strings.Contains(raw, "://") {
		return fmt.Errorf("%s: want a URL such as postgres://user@host:5432/tableemu?sslmode=disable", source)
	}
	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
	case "mysql", "mariadb":
		return fmt.Errorf("%s %s: tableemu's external database is PostgreSQL (postgres://user@host:5432/db), or an engine that speaks its protocol; MySQL is not supported. Leave it unset to keep the data in a SQLite file under --location", source, RedactDatabase(raw))
	default:
		return fmt.Errorf("%s %s: unknown database %q; tableemu takes postgres:// or postgresql:// URLs", source, RedactDatabase(raw), u.Scheme)
	}
	if u.Path == "" || u.Path == "/" {
		return fmt.Errorf("%s %s: name the database after the host, as in postgres://user@host:5432/tableemu", source, RedactDatabase(raw))
	}
	return nil
}

// RedactDatabase is a database URL fit for a log line, an error or the
// explorer: the password (in the user part or a password= parameter) is
// replaced by xxxxx. Text that does not parse as a URL is elided whole,
// since where its password sits is unknown.
func RedactDatabase(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "(the database setting)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	for k := range q {
		if strings.EqualFold(k, "password") {
			q.Set(k, "xxxxx")
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

// Redact replaces the database password, wherever it appears in s, with
// xxxxx: a last guard for text that quotes the URL (a driver's error).
func (c Config) Redact(s string) string {
	u, err := url.Parse(c.Database)
	if err != nil {
		return s
	}
	var secrets []string
	if pw, ok := u.User.Password(); ok && pw != "" {
		secrets = append(secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
	}
	for k, vs := range u.Query() {
		if strings.EqualFold(k, "password") {
			secrets = append(secrets, vs...)
		}
	}
	for _, p := range secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "xxxxx")
		}
	}
	return s
}
