package transfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tableemu/tableemu"
	"github.com/tableemu/tableemu/emulator/store"
)

// Copying from another Table endpoint (docs/transfer.md, "From another
// Table endpoint"): a real account, Azurite or another tableemu, reached
// with the Go SDK (aztables) through a connection string or a SAS URL.
// The SDK pages (continuation), signs and retries; the entities are read
// from the raw response bytes (endpoint_entities.go), because the SDK's
// own entity bytes have been through a map[string]any and lost the type
// of whole Doubles.

// EndpointOptions tune OpenEndpoint.
type EndpointOptions struct {
	// Progress, when set, is called after each page of a table read from
	// the endpoint with the table's name and the entities read so far,
	// for a line such as "copying orders: 12,345 entities". It is not
	// called when the entities are read again from the spool.
	Progress func(table string, entities int)
	// Retry replaces DefaultRetry, the policy for failed requests.
	Retry *policy.RetryOptions
	// TempDir is where each table's entities are spooled as they are read
	// (endpoint_entities.go); "" is os.TempDir(). The spool holds the
	// entities' JSON as the endpoint sent it, and is removed by Close.
	TempDir string
	// Transport, when set, sends the requests (tests; proxies).
	Transport policy.Transporter
}

// DefaultRetry is how a copy retries a request that failed: on the
// statuses the service answers when it is busy or timed out (500
// OperationTimedOut or InternalError, 503 ServerBusy, and 408, 429, 502,
// 504 from what may stand in front of it) and on connection errors
// (azcore retries every transport error but a cancelled context), up to
// six times, waiting 0.5 s, 1.5 s, 3.5 s, … (azcore's ((2^try)-1) × delay,
// with ±20% jitter) up to 30 s, following the service's guidance to back
// off exponentially on 503 (learn.microsoft.com/azure/storage/tables/storage-performance-checklist,
// "Timeout and Server Busy errors"). A Retry-After header, when sent,
// sets the delay instead (azcore does not retry when it asks for more
// than MaxRetryDelay). A try that takes over a minute is abandoned and
// retried: the service answers a query within its 30 s server timeout
// (with a continuation token when it has not finished), so a try that
// takes longer is a connection that hangs. Every request of a copy reads,
// so each is safe to repeat.
var DefaultRetry = policy.RetryOptions{
	MaxRetries:    6,
	TryTimeout:    time.Minute,
	RetryDelay:    500 * time.Millisecond,
	MaxRetryDelay: 30 * time.Second,
	StatusCodes: []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout},
}

// The development storage account every emulator serves, and its
// well-known key (learn.microsoft.com/azure/storage/common/storage-use-azurite,
// "Well-known storage account and key"): what UseDevelopmentStorage=true
// names.
const (
	devAccount  = "devstoreaccount1"
	devKey      = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
	devEndpoint = "http://127.0.0.1:10002/" + devAccount
)

// endpointSpec is what a connection string or SAS URL says: where the
// table service is, how to sign, and, for a table SAS, the one table.
type endpointSpec struct {
	service string // the table service URL, without a query
	account string // AccountName, when a key signs
	key     string // AccountKey ("" with a SAS)
	sas     string // the SAS query ("" with a key)
	table   string // a table SAS's table ("" for the whole account)
}

// display is the endpoint as messages name it: never the key or the SAS.
func (s *endpointSpec) display() string {
	if s.table != "" {
		return s.service + "/" + s.table
	}
	return s.service
}

// parseFrom reads --from: a URL (http:// or https://) is a SAS URL, of
// the service (an account SAS) or of one table (a service SAS, whose tn
// names the table); anything else is a connection string.
func parseFrom(from string) (*endpointSpec, error) {
	from = strings.TrimSpace(from)
	lower := strings.ToLower(from)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return parseSASURL(from)
	}
	return parseConnectionString(from)
}

func fromError(format string, args ...any) error {
	return tableemu.New(tableemu.InvalidInput).WithHint(format, args...)
}

func parseSASURL(from string) (*endpointSpec, error) {
	u, err := url.Parse(from)
	if err != nil || u.Host == "" {
		return nil, fromError("the source URL could not be read: give a table service URL with a SAS, such as https://ACCOUNT.table.core.windows.net/?sv=…&sig=…")
	}
	q := u.Query()
	if q.Get("sig") == "" {
		return nil, fromError("the source URL %s carries no SAS (no sig parameter): append a SAS token with read and list permissions, or give a connection string", u.Scheme+"://"+u.Host+u.Path)
	}
	s := &endpointSpec{sas: u.RawQuery}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	if tn := q.Get("tn"); tn != "" {
		// A table SAS: the path ends with the table (in any case: table
		// names are case-insensitive), which the service URL drops.
		i := strings.LastIndexByte(path, '/')
		if i < 0 || !strings.EqualFold(path[i+1:], tn) {
			return nil, fromError("the source URL's SAS is for table %s (tn), but the URL does not end with it: give https://ACCOUNT.table.core.windows.net/%s?<SAS>", tn, tn)
		}
		// The path's spelling is kept: the SDKs sign tn in lower case,
		// and the copy is to have the table's own.
		table, err := url.PathUnescape(path[i+1:])
		if err != nil {
			return nil, fromError("the source URL's table name %q is not a valid path segment", path[i+1:])
		}
		s.table, path = table, path[:i]
	}
	s.service = u.Scheme + "://" + u.Host + path
	return s, nil
}

// parseConnectionString reads the connection strings the Azure SDKs take
// (learn.microsoft.com/azure/storage/common/storage-configure-connection-string):
// keys in any case; AccountName with AccountKey or SharedAccessSignature;
// TableEndpoint, or DefaultEndpointsProtocol and EndpointSuffix (default
// https and core.windows.net); UseDevelopmentStorage=true for the
// emulator on 127.0.0.1:10002, optionally moved by
// DevelopmentStorageProxyUri.
func parseConnectionString(cs string) (*endpointSpec, error) {
	kv := map[string]string{}
	for _, part := range strings.Split(cs, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fromError("the source %q is neither a URL nor a connection string (key=value pairs separated by ';', such as AccountName=…;AccountKey=…;TableEndpoint=…)", clipSecret(part))
		}
		kv[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if strings.EqualFold(kv["usedevelopmentstorage"], "true") {
		service := devEndpoint
		if proxy := kv["developmentstorageproxyuri"]; proxy != "" {
			u, err := url.Parse(proxy)
			if err != nil || u.Host == "" {
				return nil, fromError("DevelopmentStorageProxyUri %q is not a URL", proxy)
			}
			service = u.Scheme + "://" + u.Hostname() + ":10002/" + devAccount
		}
		return &endpointSpec{service: service, account: devAccount, key: devKey}, nil
	}
	s := &endpointSpec{account: kv["accountname"], key: kv["accountkey"], sas: strings.TrimPrefix(kv["sharedaccesssignature"], "?")}
	if s.key == "" && s.sas == "" {
		return nil, fromError("the connection string has neither AccountKey nor SharedAccessSignature: copy the whole string from the portal (Access keys) or Storage Explorer")
	}
	if s.key != "" && s.account == "" {
		return nil, fromError("the connection string has AccountKey but no AccountName")
	}
	if ep := kv["tableendpoint"]; ep != "" {
		u, err := url.Parse(ep)
		if err != nil || u.Host == "" {
			return nil, fromError("TableEndpoint %q is not a URL", ep)
		}
		s.service = strings.TrimSuffix(u.Scheme+"://"+u.Host+u.EscapedPath(), "/")
		return s, nil
	}
	if s.account == "" {
		return nil, fromError("the connection string names no account: add AccountName, or TableEndpoint")
	}
	proto := kv["defaultendpointsprotocol"]
	if proto == "" {
		proto = "https"
	}
	suffix := kv["endpointsuffix"]
	if suffix == "" {
		suffix = "core.windows.net"
	}
	s.service = proto + "://" + s.account + ".table." + suffix
	return s, nil
}

// clipSecret shortens what an error quotes of a connection string, which
// may be a key.
func clipSecret(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// endpointSource is a Source reading another Table endpoint.
type endpointSource struct {
	ctx     context.Context
	spec    *endpointSpec
	o       EndpointOptions
	service *aztables.ServiceClient
	tables  []*endpointTable
	// transport is the source's own (nil with EndpointOptions.Transport).
	transport *http.Transport
}

// OpenEndpoint returns a Source that copies the tables of the endpoint
// from names (a connection string or a SAS URL; docs/transfer.md). It
// checks from and builds the client; the endpoint is first asked by
// Accounts. ctx bounds every request the source makes.
//
// The source holds one account with no name: its tables go to the
// account the import is for (Options.Account), not to one named as the
// source's, which would rarely exist locally.
func OpenEndpoint(ctx context.Context, from string, o EndpointOptions) (Source, error) {
	spec, err := parseFrom(from)
	if err != nil {
		return nil, err
	}
	if _, err := url.Parse(spec.service); err != nil {
		return nil, fromError("the table endpoint %q is not a URL", spec.service)
	}
	retry := DefaultRetry
	if o.Retry != nil {
		retry = *o.Retry
	}
	// A transport of the source's own, so that Close can close its
	// connections: a server being stopped (Azurite on SIGINT) waits for
	// idle keep-alive connections to go.
	var own *http.Transport
	if o.Transport == nil {
		own = http.DefaultTransport.(*http.Transport).Clone()
		o.Transport = &http.Client{Transport: own}
	}
	copts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: retry, Transport: o.Transport,
		PerCallPolicies: []policy.Policy{takeBody{}}}}
	var svc *aztables.ServiceClient
	if spec.key != "" {
		cred, err := aztables.NewSharedKeyCredential(spec.account, spec.key)
		if err != nil {
			return nil, fromError("the connection string's AccountKey is not base64: copy it again from the portal")
		}
		svc, err = aztables.NewServiceClientWithSharedKey(spec.service, cred, copts)
		if err != nil {
			return nil, fromError("the table endpoint %s cannot be used: %v", spec.service, err)
		}
	} else {
		svc, err = aztables.NewServiceClientWithNoCredential(spec.service+"?"+spec.sas, copts)
		if err != nil {
			return nil, fromError("the table endpoint %s cannot be used: %v", spec.service, err)
		}
	}
	return &endpointSource{ctx: ctx, spec: spec, o: o, service: svc, transport: own}, nil
}

// Accounts lists the endpoint's tables (one, for a table SAS) and, with
// the account key, reads each table's stored access policies and the
// service properties. A SAS cannot read policies (Get Table ACL is the
// account owner's alone, and an account SAS does not reach it), so with a
// SAS the tables come without them (ACL nil: a merge keeps the
// target's); service properties are asked for with an account SAS (they
// need srt=s) and left out when refused.
func (s *endpointSource) Accounts() ([]Account, error) {
	var names []string
	if s.spec.table != "" {
		names = []string{s.spec.table}
	} else {
		pager := s.service.NewListTablesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(s.ctx)
			if err != nil {
				return nil, s.failed("listing the tables", err)
			}
			for _, t := range page.Tables {
				if t.Name != nil {
					names = append(names, *t.Name)
				}
			}
		}
	}
	acct := Account{}
	if s.spec.table == "" {
		props, err := s.properties()
		if err != nil {
			return nil, err
		}
		acct.Properties = props
	}
	for _, name := range names {
		t := &endpointTable{src: s, name: name, client: s.service.NewClient(name)}
		s.tables = append(s.tables, t)
		table := &Table{Name: name, Entities: t.entities}
		if s.spec.key != "" {
			acl, err := s.acl(t.client)
			if err != nil {
				return nil, s.failed("reading the access policies of table "+name, err)
			}
			table.ACL = acl
		}
		acct.Tables = append(acct.Tables, table)
	}
	return []Account{acct}, nil
}

// properties reads the Get Table Service Properties body as sent: it is
// the Set body too (docs/protocol.md 3.5), so it is kept byte for byte
// rather than rebuilt from the SDK's struct.
func (s *endpointSource) properties() ([]byte, error) {
	var resp *http.Response
	_, err := s.service.GetProperties(runtime.WithCaptureResponse(s.ctx, &resp), nil)
	var re *azcore.ResponseError
	if err != nil && s.spec.key == "" && errors.As(err, &re) && re.StatusCode == http.StatusForbidden {
		return nil, nil // a SAS without srt=s: the target's properties stay
	}
	if err != nil {
		return nil, s.failed("reading the service properties", err)
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return nil, s.failed("reading the service properties", err)
	}
	return body, nil
}

// acl reads a table's stored access policies: an empty slice, not nil,
// when it has none, so an import that replaces or merges clears the
// target's as the source has them.
func (s *endpointSource) acl(c *aztables.Client) ([]store.SignedIdentifier, error) {
	resp, err := c.GetAccessPolicy(s.ctx, nil)
	if err != nil {
		return nil, err
	}
	ids := []store.SignedIdentifier{}
	for _, si := range resp.SignedIdentifiers {
		if si == nil || si.ID == nil {
			continue
		}
		id := store.SignedIdentifier{ID: *si.ID}
		if p := si.AccessPolicy; p != nil {
			if p.Start != nil {
				id.Start = p.Start.UTC()
			}
			if p.Expiry != nil {
				id.Expiry = p.Expiry.UTC()
			}
			if p.Permission != nil {
				id.Permission = *p.Permission
			}
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// Close removes the tables' spools and closes the source's idle
// connections.
func (s *endpointSource) Close() error {
	if s.transport != nil {
		s.transport.CloseIdleConnections()
	}
	var first error
	for _, t := range s.tables {
		if err := t.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// failed is the error for a request to the endpoint that failed after its
// retries: the endpoint's own code and message when it answered with an
// error the service has, with a hint saying what to do. It never quotes
// the request's URL, which may carry a SAS.
func (s *endpointSource) failed(doing string, err error) error {
	if ctxErr := s.ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	where := s.spec.display()
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		code := tableemu.Code(re.ErrorCode)
		e := tableemu.New(code)
		if !tableemu.Known(code) {
			e = tableemu.New(tableemu.InternalError).WithDetail("the source answered %d %s", re.StatusCode, re.ErrorCode)
		}
		var advice string
		switch {
		case re.StatusCode == http.StatusForbidden || re.StatusCode == http.StatusUnauthorized:
			advice = "check the account key, or that the SAS is valid now and grants read and list (an account SAS: ss=t, srt=sco, sp=rl)"
		case re.StatusCode == http.StatusNotFound:
			advice = "check the endpoint's address and account, and that the table still exists"
		case re.StatusCode >= 500 || re.StatusCode == http.StatusTooManyRequests || re.StatusCode == http.StatusRequestTimeout:
			advice = "the source kept failing after its retries; try again later"
		default:
			advice = "check that the address is a Table service's and the key or SAS is for it"
		}
		return e.WithHint("copying from %s, %s: the source answered %d %s; %s.", where, doing, re.StatusCode, re.ErrorCode, advice)
	}
	// A transport error (after the retries): keep its cause, not the URL
	// that url.Error quotes.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return tableemu.New(tableemu.InternalError).WithDetail("%v", err).WithHint(
		"copying from %s, %s: %v. Check the endpoint's address and that it is running.", where, doing, err)
}

// String names the source for messages.
func (s *endpointSource) String() string { return fmt.Sprintf("table endpoint %s", s.spec.display()) }
