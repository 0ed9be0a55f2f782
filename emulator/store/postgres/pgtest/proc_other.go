//go:build !linux

package pgtest

import (
	"errors"
	"os"
	"os/exec"
)

// credential stands for syscall.Credential, which not every system has:
// outside Linux the harness runs PostgreSQL as the current user.
type credential struct{}

func asPostgres(dir string) (*credential, error) {
	if os.Geteuid() == 0 {
		return nil, errors.New("PostgreSQL refuses to run as root: run the tests as another user, or set " + EnvURL)
	}
	return nil, nil
}

type credentialT = credential

func giveTo(string, *credential) error { return nil }

func setCredential(*exec.Cmd, *credential) {}

func dieWithParent(*exec.Cmd) {}

func stopProcess(p *os.Process) { p.Kill() }
