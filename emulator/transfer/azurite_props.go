package transfer

import (
	"encoding/xml"
)

// An account's service properties as Azurite keeps them in
// "$SERVICES_COLLECTION$": the Set Table Service Properties body it was
// given, parsed into Azurite's model (src/table/handlers/ServiceHandler.ts,
// src/table/generated/artifacts/models.ts: TableServiceProperties), each
// element that a Set left out kept from before or absent.
type azuriteService struct {
	AccountName   string             `json:"accountName"`
	Logging       *azuriteLogging    `json:"logging"`
	HourMetrics   *azuriteMetrics    `json:"hourMetrics"`
	MinuteMetrics *azuriteMetrics    `json:"minuteMetrics"`
	Cors          *[]azuriteCorsRule `json:"cors"`
}

type azuriteLogging struct {
	Version         string            `json:"version"`
	DeleteProperty  bool              `json:"deleteProperty"`
	Read            bool              `json:"read"`
	Write           bool              `json:"write"`
	RetentionPolicy *azuriteRetention `json:"retentionPolicy"`
}

type azuriteMetrics struct {
	Version         string            `json:"version"`
	Enabled         bool              `json:"enabled"`
	IncludeAPIs     bool              `json:"includeAPIs"`
	RetentionPolicy *azuriteRetention `json:"retentionPolicy"`
}

type azuriteRetention struct {
	Enabled bool `json:"enabled"`
	Days    int  `json:"days"`
}

type azuriteCorsRule struct {
	AllowedOrigins  string `json:"allowedOrigins"`
	AllowedMethods  string `json:"allowedMethods"`
	AllowedHeaders  string `json:"allowedHeaders"`
	ExposedHeaders  string `json:"exposedHeaders"`
	MaxAgeInSeconds int    `json:"maxAgeInSeconds"`
}

// The Set Table Service Properties body (docs/protocol.md 3.5), its
// elements in the order the service writes them, as tableemu reads it
// (emulator/service.go). An element Azurite does not have is left out, so
// the target keeps its own.
type xmlServiceProperties struct {
	XMLName       xml.Name    `xml:"StorageServiceProperties"`
	Logging       *xmlLogging `xml:"Logging,omitempty"`
	HourMetrics   *xmlMetrics `xml:"HourMetrics,omitempty"`
	MinuteMetrics *xmlMetrics `xml:"MinuteMetrics,omitempty"`
	Cors          *xmlCors    `xml:"Cors,omitempty"`
}

type xmlLogging struct {
	Version         string       `xml:"Version"`
	Read            bool         `xml:"Read"`
	Write           bool         `xml:"Write"`
	Delete          bool         `xml:"Delete"`
	RetentionPolicy xmlRetention `xml:"RetentionPolicy"`
}

type xmlMetrics struct {
	Version         string       `xml:"Version"`
	Enabled         bool         `xml:"Enabled"`
	IncludeAPIs     *bool        `xml:"IncludeAPIs,omitempty"`
	RetentionPolicy xmlRetention `xml:"RetentionPolicy"`
}

type xmlRetention struct {
	Enabled bool `xml:"Enabled"`
	Days    *int `xml:"Days,omitempty"`
}

type xmlCors struct {
	Rules []xmlCorsRule `xml:"CorsRule"`
}

type xmlCorsRule struct {
	AllowedMethods  string `xml:"AllowedMethods"`
	AllowedOrigins  string `xml:"AllowedOrigins"`
	AllowedHeaders  string `xml:"AllowedHeaders"`
	ExposedHeaders  string `xml:"ExposedHeaders"`
	MaxAgeInSeconds int    `xml:"MaxAgeInSeconds"`
}

// setBody is the account's properties as a Set Table Service Properties
// body, nil when Azurite holds none of them. A version Azurite left out
// (its model makes Metrics' optional) is the service's only one, "1.0".
func (d *azuriteService) setBody() ([]byte, error) {
	var p xmlServiceProperties
	if l := d.Logging; l != nil {
		p.Logging = &xmlLogging{Version: analyticsVersion(l.Version), Read: l.Read, Write: l.Write, Delete: l.DeleteProperty,
			RetentionPolicy: retentionElement(l.RetentionPolicy)}
	}
	p.HourMetrics = metricsElement(d.HourMetrics)
	p.MinuteMetrics = metricsElement(d.MinuteMetrics)
	if d.Cors != nil {
		p.Cors = &xmlCors{}
		for _, r := range *d.Cors {
			p.Cors.Rules = append(p.Cors.Rules, xmlCorsRule{AllowedMethods: r.AllowedMethods, AllowedOrigins: r.AllowedOrigins,
				AllowedHeaders: r.AllowedHeaders, ExposedHeaders: r.ExposedHeaders, MaxAgeInSeconds: r.MaxAgeInSeconds})
		}
	}
	if p.Logging == nil && p.HourMetrics == nil && p.MinuteMetrics == nil && p.Cors == nil {
		return nil, nil
	}
	body, err := xml.Marshal(&p)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), body...), nil
}

func metricsElement(m *azuriteMetrics) *xmlMetrics {
	if m == nil {
		return nil
	}
	x := &xmlMetrics{Version: analyticsVersion(m.Version), Enabled: m.Enabled, RetentionPolicy: retentionElement(m.RetentionPolicy)}
	if m.Enabled {
		// IncludeAPIs is sent only while metrics are enabled (docs/protocol.md 3.5).
		include := m.IncludeAPIs
		x.IncludeAPIs = &include
	}
	return x
}

func retentionElement(r *azuriteRetention) xmlRetention {
	if r == nil || !r.Enabled {
		return xmlRetention{}
	}
	days := r.Days
	return xmlRetention{Enabled: true, Days: &days}
}

func analyticsVersion(v string) string {
	if v == "" {
		return "1.0"
	}
	return v
}
