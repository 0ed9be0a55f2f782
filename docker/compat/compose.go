package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// composeService reads, from a compose file of docker/, the service that
// runs the image (the one with `image: tableemu`): its entrypoint, command
// and healthcheck test, each written as a flow sequence of double-quoted
// strings on one line (which is JSON too), and the connection string given
// to the app (AZURE_TABLES_CONNECTION_STRING). No YAML library: the files
// keep to that form so that the image test can read exactly what compose
// runs, and a line it cannot read is an error, never skipped.
type composeService struct {
	Entrypoint, Command, Health []string
	AppConnectionString         string
}

var (
	composeKey = regexp.MustCompile(`^(\s*)(entrypoint|command|test):\s*(.*?)\s*$`)
	imageLine  = regexp.MustCompile(`^(\s*)image:\s*tableemu\b`)
	appCS      = regexp.MustCompile(`^\s*AZURE_TABLES_CONNECTION_STRING:\s*"(.*)"\s*$`)
)

func readCompose(path string) (*composeService, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s composeService
	lines := strings.Split(string(b), "\n")
	in, indent := false, ""
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#") || strings.TrimSpace(l) == "" {
			continue
		}
		if m := appCS.FindStringSubmatch(l); m != nil {
			s.AppConnectionString = m[1]
		}
		if m := imageLine.FindStringSubmatch(l); m != nil {
			in, indent = true, m[1]
			continue
		}
		// The service's keys are at the image key's indentation or deeper;
		// a shallower line starts the next service.
		if in && len(l)-len(strings.TrimLeft(l, " ")) < len(indent) {
			in = false
		}
		m := composeKey.FindStringSubmatch(l)
		if !in || m == nil {
			continue
		}
		value := m[3]
		if c := strings.Index(value, " #"); c >= 0 && strings.HasSuffix(value[:c], "]") {
			value = strings.TrimSpace(value[:c])
		}
		var words []string
		if err := json.Unmarshal([]byte(value), &words); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: write it as a flow sequence of double-quoted strings, e.g. [\"azurite-table\", \"--tableHost\", \"0.0.0.0\"], so that docker/test-image.sh can read it", path, i+1, m[2])
		}
		switch m[2] {
		case "entrypoint":
			s.Entrypoint = words
		case "command":
			s.Command = words
		case "test":
			if len(words) < 2 || words[0] != "CMD" {
				return nil, fmt.Errorf("%s:%d: healthcheck test %q: the image has no shell; use [\"CMD\", \"/tableemu\", \"healthcheck\"]", path, i+1, words)
			}
			s.Health = words[1:]
		}
	}
	if s.AppConnectionString == "" {
		return nil, fmt.Errorf("%s: no AZURE_TABLES_CONNECTION_STRING for the app", path)
	}
	if s.Health == nil {
		return nil, fmt.Errorf("%s: the tableemu service has no healthcheck test", path)
	}
	return &s, nil
}
