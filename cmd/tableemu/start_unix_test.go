//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnwritableDataDirectory: an existing directory the user may not
// write stops the start with a message naming it, and stays empty. As
// root (who writes anywhere) the server runs as nobody.
func TestUnwritableDataDirectory(t *testing.T) {
	bin := binary(t)
	base, err := os.MkdirTemp("", "tableemu-ro")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	cmd := exec.Command(bin, "--tablePort", "0", "--location", dir)
	cmd.Dir = base
	if os.Geteuid() == 0 {
		// The binary's directory must be open to that user too.
		os.Chmod(filepath.Dir(bin), 0o755)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	} else {
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
	}
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d (%v), want 1:\n%s", code, err, out)
	}
	if !strings.Contains(string(out), dir) || !strings.Contains(string(out), "not writable") {
		t.Errorf("message does not name the directory as not writable:\n%s", out)
	}
	if s := snapshot(t, dir); strings.Contains(s, "\n") {
		t.Errorf("the failed start left files:\n%s", s)
	}
}
