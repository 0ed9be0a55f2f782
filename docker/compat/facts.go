package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Facts is azurite-compat.json: how Azurite's command lines and the
// Testcontainers modules start the image, what they wait for, and the
// connection they build (the file's comment says what each field means).
type Facts struct {
	Comment  []string `json:"comment"`
	Key      string   `json:"key"` // the well-known development key, {key}
	Commands []Config `json:"commands"`
	Modules  []Module `json:"modules"`
}

// Module is one Testcontainers module, as read from its source.
type Module struct {
	ID           string   `json:"id"`
	Language     string   `json:"language"`
	Package      string   `json:"package"`
	Source       string   `json:"source"`
	ImageDefault string   `json:"image_default"`
	Snippet      []string `json:"snippet"` // what the language's code in docs/containers.md must say
	Configs      []Config `json:"configs"`
}

// Config is one way of starting the container: a docker command line, or a
// module with some options.
type Config struct {
	ID               string            `json:"id"`
	Docker           []string          `json:"docker,omitempty"` // docker run options before the image
	Code             string            `json:"code,omitempty"`
	Entrypoint       []string          `json:"entrypoint,omitempty"` // nil: the image's
	Cmd              []string          `json:"cmd,omitempty"`        // nil: the image's, unless Entrypoint is set
	Env              map[string]string `json:"env,omitempty"`
	Ports            []int             `json:"ports"`
	Wait             []Wait            `json:"wait"`
	ConnectionString string            `json:"connection_string,omitempty"`
	ServiceURL       string            `json:"service_url,omitempty"` // with the shared key of devstoreaccount1
	Works            bool              `json:"works"`
	Why              string            `json:"why"`
	Expect           []string          `json:"expect,omitempty"` // in the server's log
	// SDK lists the calls made besides the Go SDK's: js and python (the
	// JavaScript and Python SDKs, docker/compat/sdk.*), python-doc (the
	// Python code of docs/containers.md, docker/compat/snippet.py).
	SDK []string `json:"sdk,omitempty"`
}

// Wait is one readiness check: a log line or a port.
type Wait struct {
	Log   string `json:"log,omitempty"`
	Match string `json:"match,omitempty"` // contains, search, line, java-line
	Port  int    `json:"port,omitempty"`
}

func loadFacts(path string) (*Facts, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f Facts
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &f, f.validate()
}

// validate checks what the test and the documents rely on.
func (f *Facts) validate() error {
	seen := map[string]bool{}
	check := func(c Config) error {
		if c.ID == "" || seen[c.ID] {
			return fmt.Errorf("configuration id %q empty or repeated", c.ID)
		}
		seen[c.ID] = true
		if c.Entrypoint == nil && c.Cmd == nil && len(c.Docker) == 0 && c.Code == "" {
			return fmt.Errorf("%s: neither a docker command line nor code", c.ID)
		}
		if len(c.Wait) == 0 || len(c.Ports) == 0 {
			return fmt.Errorf("%s: no wait or no ports", c.ID)
		}
		if (c.ConnectionString == "") == (c.ServiceURL == "") {
			return fmt.Errorf("%s: give exactly one of connection_string and service_url", c.ID)
		}
		for _, w := range c.Wait {
			switch {
			case w.Port != 0 && w.Log == "" && w.Match == "":
			case w.Port == 0 && w.Log != "" && slices.Contains([]string{"contains", "search", "line", "java-line"}, w.Match):
				if w.Match != "contains" {
					if _, err := regexp.Compile(w.Log); err != nil {
						return fmt.Errorf("%s: %w", c.ID, err)
					}
				}
			default:
				return fmt.Errorf("%s: wait %+v: want a port, or a log with a match", c.ID, w)
			}
		}
		for _, s := range c.SDK {
			if !slices.Contains([]string{"js", "python", "python-doc"}, s) {
				return fmt.Errorf("%s: sdk %q: want js, python or python-doc", c.ID, s)
			}
		}
		return nil
	}
	for _, c := range f.Commands {
		if err := check(c); err != nil {
			return err
		}
	}
	for _, m := range f.Modules {
		works := false
		for _, c := range m.Configs {
			if err := check(c); err != nil {
				return err
			}
			works = works || c.Works
		}
		if !works {
			return fmt.Errorf("module %s: no configuration that works", m.ID)
		}
	}
	return nil
}

// find returns the configuration with this id and its module (nil for a
// command line).
func (f *Facts) find(id string) (Config, *Module, error) {
	for _, c := range f.Commands {
		if c.ID == id {
			return c, nil, nil
		}
	}
	for i, m := range f.Modules {
		for _, c := range m.Configs {
			if c.ID == id {
				return c, &f.Modules[i], nil
			}
		}
	}
	return Config{}, nil, fmt.Errorf("no configuration %q in the facts", id)
}

// argv is the process Docker starts: a container's entrypoint replaces the
// image's and drops the image's command; otherwise the container's command,
// if any, replaces the image's command after the image's entrypoint (the
// Docker Engine's merge of a container's config with its image's).
func (c Config) argv(imageEntrypoint, imageCmd []string) []string {
	if len(c.Entrypoint) > 0 {
		return append(slices.Clone(c.Entrypoint), c.Cmd...)
	}
	cmd := imageCmd
	if len(c.Cmd) > 0 {
		cmd = c.Cmd
	}
	return append(slices.Clone(imageEntrypoint), cmd...)
}

// environ is the container's environment added to the image's, {key}
// filled in, sorted.
func (c Config) environ(key string) []string {
	var out []string
	for k, v := range c.Env {
		out = append(out, k+"="+strings.ReplaceAll(v, "{key}", key))
	}
	slices.Sort(out)
	return out
}

var placeholder = regexp.MustCompile(`\{(key|host|port:(\d+))\}`)

// fill puts the key, host and mapped ports into a connection template.
func fill(tmpl, key, host string, mapped func(int) int) string {
	return placeholder.ReplaceAllStringFunc(tmpl, func(p string) string {
		m := placeholder.FindStringSubmatch(p)
		switch {
		case m[1] == "key":
			return key
		case m[1] == "host":
			return host
		default:
			n, _ := strconv.Atoi(m[2])
			return strconv.Itoa(mapped(n))
		}
	})
}

// dockerfileCommand reads ENTRYPOINT and CMD (exec form) from a Dockerfile:
// what the documents show the image's argv to be. The image test checks
// that the built image says the same.
func dockerfileCommand(path string) (entrypoint, cmd []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		for _, kw := range []string{"ENTRYPOINT", "CMD"} {
			rest, ok := strings.CutPrefix(l, kw+" ")
			if !ok {
				continue
			}
			var v []string
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				return nil, nil, fmt.Errorf("%s: %s is not in exec form: %v", path, kw, err)
			}
			if kw == "ENTRYPOINT" {
				entrypoint = v
			} else {
				cmd = v
			}
		}
	}
	if entrypoint == nil {
		return nil, nil, fmt.Errorf("%s: no ENTRYPOINT", path)
	}
	return entrypoint, cmd, nil
}
