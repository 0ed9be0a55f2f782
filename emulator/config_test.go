package emulator

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tableemu/tableemu/emulator/store/sqlite"
)

func TestLoadConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     string
		wantErr string // substring; "" means success
		check   func(t *testing.T, c Config)
	}{
		{name: "defaults", check: func(t *testing.T, c Config) {
			// No --location: the current directory, as in Azurite.
			if c.Addr() != "127.0.0.1:10002" || c.InMemory || c.Location != "." || c.KeepAlive != 0 || len(c.Accounts) != 1 || c.Accounts[0].Name != DevAccount || c.Accounts[0].Keys[0] != DevKey {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "keep-alive seconds", args: []string{"--tableKeepAliveTimeout", "2.5"}, check: func(t *testing.T, c Config) {
			if c.KeepAlive != 2500*time.Millisecond {
				t.Fatalf("KeepAlive %v", c.KeepAlive)
			}
		}},
		{name: "keep-alive zero", args: []string{"--tableKeepAliveTimeout", "0"}, check: func(t *testing.T, c Config) {
			if c.KeepAlive != NoKeepAliveTimeout {
				t.Fatalf("KeepAlive %v, want NoKeepAliveTimeout", c.KeepAlive)
			}
		}},
		{name: "keep-alive zero written 0.0", args: []string{"--tableKeepAliveTimeout=0.0"}, check: func(t *testing.T, c Config) {
			if c.KeepAlive != NoKeepAliveTimeout {
				t.Fatalf("KeepAlive %v, want NoKeepAliveTimeout", c.KeepAlive)
			}
		}},
		{name: "cache size", args: []string{"--cacheSize", "64"}, check: func(t *testing.T, c Config) {
			if c.CacheSize != 64 {
				t.Errorf("CacheSize %d, want 64", c.CacheSize)
			}
		}},
		{name: "cache off", args: []string{"--cacheSize", "0"}, check: func(t *testing.T, c Config) {
			if c.CacheSize >= 0 {
				t.Errorf("CacheSize %d, want negative (off)", c.CacheSize)
			}
		}},
		{name: "cache size negative", args: []string{"--cacheSize", "-5"}, wantErr: `--cacheSize "-5": want MiB`},
		{name: "cache size in GB", args: []string{"--cacheSize", "1GB"}, wantErr: `--cacheSize "1GB": want MiB`},
		{name: "keep-alive negative", args: []string{"--tableKeepAliveTimeout", "-1"}, wantErr: `--tableKeepAliveTimeout "-1": want seconds`},
		{name: "keep-alive NaN", args: []string{"--tableKeepAliveTimeout", "NaN"}, wantErr: "want seconds"},
		{name: "keep-alive over a day", args: []string{"--tableKeepAliveTimeout", "86401"}, wantErr: "want seconds"},
		{name: "keep-alive not a number", args: []string{"--tableKeepAliveTimeout", "5s"}, wantErr: "want seconds"},
		{name: "every blob and queue flag", args: []string{"--blobHost", "0.0.0.0", "--blobPort", "1", "--blobKeepAliveTimeout", "5", "--queueHost", "0.0.0.0", "--queuePort", "2", "--queueKeepAliveTimeout", "5", "--extentMemoryLimit", "50"},
			check: func(t *testing.T, c Config) {
				if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "--blobHost, --blobPort, --blobKeepAliveTimeout, --queueHost, --queuePort, --queueKeepAliveTimeout, --extentMemoryLimit ignored") {
					t.Fatalf("%q", c.Warnings)
				}
			}},
		{name: "in memory with a location", args: []string{"--location", "/data", "--inMemoryPersistence"}, check: func(t *testing.T, c Config) {
			if !c.InMemory || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "--location is ignored") {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "misspelt flag", args: []string{"--tablPort", "1"}, wantErr: "unknown flag --tablPort; did you mean --tablePort? (tableemu --help lists the flags)"},
		{name: "flag in the wrong case", args: []string{"--skipAPIVersionCheck"}, wantErr: "did you mean --skipApiVersionCheck?"},
		{name: "flag with a dash", args: []string{"--table-host", "0.0.0.0"}, wantErr: "did you mean --tableHost?"},
		{name: "prefix of one flag", args: []string{"--disableProduct"}, wantErr: "did you mean --disableProductStyleUrl?"},
		{name: "nothing close", args: []string{"--verbose"}, wantErr: "unknown flag --verbose (tableemu --help"},
		{name: "value missing", args: []string{"--tablePort"}, wantErr: "flag needs an argument: --tablePort"},
		{name: "azurite flags", args: []string{"--tableHost", "0.0.0.0", "--tablePort=10012", "--location", "/tmp/x", "--loose", "--skipApiVersionCheck", "--disableProductStyleUrl", "--silent", "--debug", "/tmp/d.log", "--disableTelemetry"},
			check: func(t *testing.T, c Config) {
				if c.Addr() != "0.0.0.0:10012" || c.Location != "/tmp/x" || !c.Loose || !c.SkipAPIVersionCheck || !c.DisableProductStyleURL || !c.Silent || c.Debug != "/tmp/d.log" {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "short flags", args: []string{"-l", "dir", "-L", "-s", "-d", "f"}, check: func(t *testing.T, c Config) {
			if c.Location != "dir" || !c.Loose || !c.Silent || c.Debug != "f" {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "azurite command line", args: []string{"azurite", "--blobHost", "0.0.0.0", "--tableHost", "0.0.0.0", "--queuePort", "10001"}, check: func(t *testing.T, c Config) {
			if c.Host != "0.0.0.0" || len(c.Warnings) != 2 {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "azurite command appended to the entrypoint", args: []string{"--tableHost", "0.0.0.0", "--location", "/data", "azurite-table", "--tableHost", "0.0.0.0", "--loose"}, check: func(t *testing.T, c Config) {
			if c.Host != "0.0.0.0" || !c.Loose || c.Location != "/data" || len(c.Warnings) != 1 {
				t.Fatalf("%+v", c)
			}
		}},
		{name: "in memory", args: []string{"--inMemoryPersistence"}, check: func(t *testing.T, c Config) {
			if !c.InMemory || c.Location != "" || len(c.Warnings) != 0 {
				t.Fatal("not in memory")
			}
		}},
		{name: "unknown flag", args: []string{"--tablePrt", "1"}, wantErr: "tablePrt"},
		{name: "port not a number", args: []string{"--tablePort", "http"}, wantErr: "tablePort"},
		{name: "port out of range", args: []string{"--tablePort", "70000"}, wantErr: "not a port"},
		{name: "host not an IP", args: []string{"--tableHost", "example.com"}, wantErr: "not an IP"},
		{name: "stray argument", args: []string{"serve"}, wantErr: "unexpected argument"},
		{name: "cert without key", args: []string{"--cert", "c.pem"}, wantErr: "--cert and --key"},
		{name: "pfx", args: []string{"--cert", "c.pfx", "--pwd", "x"}, wantErr: "PFX"},
		{name: "oauth without https", args: []string{"--oauth", "basic"}, wantErr: "HTTPS"},
		{name: "oauth level", args: []string{"--oauth", "full", "--cert", "c", "--key", "k"}, wantErr: "basic"},
		{name: "accounts", env: "acct1:" + DevKey + ":a2V5Mg==;acct2:a2V5Mw==;", check: func(t *testing.T, c Config) {
			if len(c.Accounts) != 2 || c.Accounts[0].Name != "acct1" || len(c.Accounts[0].RawKeys) != 2 || string(c.Accounts[0].RawKeys[1]) != "key2" || string(c.Accounts[1].RawKeys[0]) != "key3" {
				t.Fatalf("%+v", c.Accounts)
			}
		}},
		{name: "accounts replace the default", env: "other1:a2V5Mg==", check: func(t *testing.T, c Config) {
			if len(c.Accounts) != 1 || c.Accounts[0].Name != "other1" {
				t.Fatalf("%+v", c.Accounts)
			}
		}},
		{name: "lenient key", env: "acct1:0123456789abcdef", check: func(t *testing.T, c Config) {
			if len(c.Accounts[0].RawKeys[0]) != 12 || len(c.Warnings) != 0 {
				t.Fatalf("%+v %v", c.Accounts, c.Warnings)
			}
		}},
		{name: "key needing lenient decoding", env: "acct1:key", check: func(t *testing.T, c Config) {
			if len(c.Accounts[0].RawKeys[0]) != 2 || len(c.Warnings) != 1 {
				t.Fatalf("%+v %v", c.Accounts, c.Warnings)
			}
		}},
		{name: "account without key", env: "acct1", wantErr: "AZURITE_ACCOUNTS"},
		{name: "three keys", env: "acct1:a:b:c", wantErr: "name:key1"},
		{name: "empty key", env: "acct1:", wantErr: "empty key"},
		{name: "bad key characters", env: "acct1:!!!!", wantErr: "not base64"},
		{name: "duplicate account", env: "acct1:a2V5;acct1:a2V5", wantErr: "twice"},
		{name: "only separators", env: ";;", wantErr: "no accounts"},
		{name: "accounts separated by commas", env: "a1:k,a2:k", wantErr: `"a1:…": accounts are separated by ";", not ","`},
		{name: "commas after two keys", env: "acct1:a2V5:a2V5,acct2:a2V5", wantErr: `accounts are separated by ";"`},
		{name: "comma and space", env: "acct1:a2V5, acct2:a2V5", wantErr: `accounts are separated by ";"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(tc.args, func(k string) string {
				if k == "AZURITE_ACCOUNTS" {
					return tc.env
				}
				return ""
			}, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestLoadConfigHelpAndVersion: --help writes the help to the usage writer
// and returns flag.ErrHelp; --version returns ErrVersion. Every flag the
// set defines is in the help.
func TestLoadConfigHelpAndVersion(t *testing.T) {
	var b bytes.Buffer
	if _, err := LoadConfig([]string{"--help"}, func(string) string { return "" }, &b); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	fs, _ := newFlagSet(&Config{})
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) == 1 {
			if !strings.Contains(b.String(), ", -"+f.Name+" ") && !strings.Contains(b.String(), ", -"+f.Name+"\n") {
				t.Errorf("-%s is not in the help", f.Name)
			}
			return
		}
		if !strings.Contains(b.String(), "--"+f.Name+" ") && !strings.Contains(b.String(), "--"+f.Name+",") {
			t.Errorf("--%s is not in the help", f.Name)
		}
	})
	if _, err := LoadConfig([]string{"--version"}, func(string) string { return "" }, io.Discard); !errors.Is(err, ErrVersion) {
		t.Fatalf("--version: %v", err)
	}
}

// TestZeroConfigWritesNothing: New(Config{}) serves from memory: an
// embedding test that names no directory gets no database file in its
// working directory.
func TestZeroConfigWritesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s, err := New(Config{Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.DatabasePath() != ":memory:" {
		t.Fatalf("DatabasePath %q, want :memory:", s.DatabasePath())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("New(Config{}) wrote %v", entries)
	}
}

// TestNewLocksItsDirectory: two Servers embedded in one process on one
// Location: the second New fails, naming the directory; after Close the
// directory is free again.
func TestNewLocksItsDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := New(Config{Location: dir, Silent: true})
	if err != nil {
		t.Fatal(err)
	}
	second, err := New(Config{Location: dir, Silent: true})
	var le *sqlite.LockedError
	if !errors.As(err, &le) || le.Dir != dir {
		if second != nil {
			second.Close()
		}
		t.Fatalf("second New on %s: %v, want a LockedError naming it", dir, err)
	}
	first.Close()
	third, err := New(Config{Location: dir, Silent: true})
	if err != nil {
		t.Fatalf("New after Close: %v", err)
	}
	third.Close()
}

// TestKeepAliveTimeoutZero: --tableKeepAliveTimeout 0 (NoKeepAliveTimeout)
// gives net/http a negative IdleTimeout, its "no idle timeout"; a zero
// there would fall back to ReadTimeout. Over a real connection, with
// ReadTimeout cut to 200 ms so that such a fallback would show, a
// connection idle for 600 ms still serves a second request; with
// KeepAlive 200 ms the same connection is closed (the control: the wait
// is long enough to see a close).
func TestKeepAliveTimeoutZero(t *testing.T) {
	if hs := (&Server{}).HTTPServer(); hs.IdleTimeout != DefaultKeepAlive {
		t.Fatalf("zero Config: IdleTimeout %v, want %v", hs.IdleTimeout, DefaultKeepAlive)
	}
	if hs := (&Server{cfg: Config{KeepAlive: NoKeepAliveTimeout}}).HTTPServer(); hs.IdleTimeout >= 0 || hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 {
		t.Fatalf("NoKeepAliveTimeout: IdleTimeout %v, ReadHeaderTimeout %v, ReadTimeout %v; want no idle timeout, request timeouts kept",
			hs.IdleTimeout, hs.ReadHeaderTimeout, hs.ReadTimeout)
	}
	idleSurvives := func(keepAlive time.Duration) bool {
		s, err := New(Config{InMemory: true, Silent: true, KeepAlive: keepAlive})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		hs := s.HTTPServer()
		hs.ReadTimeout = 200 * time.Millisecond
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go hs.Serve(ln)
		defer hs.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		br := bufio.NewReader(c)
		get := func() error {
			if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
				return err
			}
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				return err
			}
			io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
		if err := get(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
		return get() == nil
	}
	if !idleSurvives(NoKeepAliveTimeout) {
		t.Error("NoKeepAliveTimeout: the connection idle for 600 ms was closed")
	}
	if idleSurvives(200 * time.Millisecond) {
		t.Error("KeepAlive 200 ms: the connection idle for 600 ms still served a request")
	}
}

// TestLoadConfigProfile: --profile and TABLEEMU_PROFILE choose the service
// tableemu answers as; the flag wins; cosmos moves the default port to
// 8902 but not a port given; anything else is an error naming its source.
func TestLoadConfigProfile(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		profile   string
		port      int
		wantErr   string
	}{
		{name: "default", profile: ProfileStorage, port: 10002},
		{name: "flag storage", args: []string{"--profile", "storage"}, profile: ProfileStorage, port: 10002},
		{name: "flag cosmos", args: []string{"--profile=cosmos"}, profile: ProfileCosmos, port: CosmosPort},
		{name: "env cosmos", env: "cosmos", profile: ProfileCosmos, port: CosmosPort},
		{name: "flag wins over env", args: []string{"--profile", "storage"}, env: "cosmos", profile: ProfileStorage, port: 10002},
		{name: "cosmos with port", args: []string{"--profile", "cosmos", "--tablePort", "10002"}, profile: ProfileCosmos, port: 10002},
		{name: "port before profile", args: []string{"--tablePort", "0", "--profile", "cosmos"}, profile: ProfileCosmos, port: 0},
		{name: "bad flag", args: []string{"--profile", "Cosmos DB"}, wantErr: `--profile "Cosmos DB": want storage`},
		{name: "bad env", env: "table", wantErr: `TABLEEMU_PROFILE "table": want storage`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadConfig(tc.args, func(k string) string {
				if k == "TABLEEMU_PROFILE" {
					return tc.env
				}
				return ""
			}, io.Discard)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Profile != tc.profile || c.Port != tc.port || c.Cosmos() != (tc.profile == ProfileCosmos) {
				t.Fatalf("Profile %q, Port %d; want %q, %d", c.Profile, c.Port, tc.profile, tc.port)
			}
		})
	}
}
