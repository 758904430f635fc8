package statsd

import (
	"net"
	"net/url"
	"os"
	"strings"
)

// Datadog's environment variables, read by Options.WithEnv as datadog-go
// v5 reads them (statsd/statsdex.go: resolveAddr, parseAgentURL,
// ddEnvTagsMapping).
const (
	EnvAgentHost     = "DD_AGENT_HOST"     // the agent's host (or a unix:// address)
	EnvDogStatsDPort = "DD_DOGSTATSD_PORT" // its UDP port with DD_AGENT_HOST (default 8125)
	EnvDogStatsDURL  = "DD_DOGSTATSD_URL"  // udp://host[:port] or unix:///path; wins over DD_AGENT_HOST
	EnvEnv           = "DD_ENV"            // tag env
	EnvService       = "DD_SERVICE"        // tag service
	EnvVersion       = "DD_VERSION"        // tag version
	EnvEntityID      = "DD_ENTITY_ID"      // tag dd.internal.entity_id
)

// envTags maps each variable to its tag, in datadog-go's order.
var envTags = [...]struct{ env, tag string }{
	{EnvEntityID, "dd.internal.entity_id"},
	{EnvEnv, "env"},
	{EnvService, "service"},
	{EnvVersion, "version"},
}

// WithEnv returns o with Datadog's variables read into what it leaves
// unset, and FromEnv false:
//
//   - Addr, when empty: DD_DOGSTATSD_URL (udp://host[:port], the port
//     8125 by default; unix://, unixgram:// or unixstream:// and a path),
//     else DD_AGENT_HOST with DD_DOGSTATSD_PORT (default 8125) unless the
//     host has a port or is a unix:// address;
//   - Tags: env, service, version and dd.internal.entity_id from DD_ENV,
//     DD_SERVICE, DD_VERSION and DD_ENTITY_ID, appended after o.Tags
//     (datadog-go's order), unless o.Tags has that key already.
//
// A DD_DOGSTATSD_URL that is not one of those forms is ignored, as
// datadog-go ignores it. It reads the environment once; New calls it when
// FromEnv is set.
func (o Options) WithEnv() Options {
	o.FromEnv = false
	if o.Addr == "" {
		o.Addr = envAddr()
	}
	has := map[string]bool{}
	for _, t := range o.Tags {
		k, _, _ := cut(t)
		has[k] = true
	}
	var tags []string
	for _, m := range envTags {
		if v := os.Getenv(m.env); v != "" && !has[m.tag] {
			tags = append(tags, m.tag+":"+v)
		}
	}
	if tags != nil {
		o.Tags = append(append([]string(nil), o.Tags...), tags...)
	}
	return o
}

func envAddr() string {
	if u := os.Getenv(EnvDogStatsDURL); u != "" {
		for _, p := range []string{prefixUnix, prefixUnixgram, prefixUnixstream} {
			if strings.HasPrefix(u, p) {
				return u
			}
		}
		if pu, err := url.Parse(u); err == nil && pu.Scheme == "udp" && pu.Host != "" {
			if pu.Port() != "" {
				return pu.Host
			}
			return net.JoinHostPort(pu.Hostname(), DefaultPort)
		}
	}
	host := os.Getenv(EnvAgentHost)
	if host == "" {
		return ""
	}
	for _, p := range []string{prefixUnix, prefixUnixgram, prefixUnixstream} {
		if strings.HasPrefix(host, p) {
			return host
		}
	}
	if strings.Contains(host, ":") {
		return host
	}
	port := os.Getenv(EnvDogStatsDPort)
	if port == "" {
		port = DefaultPort
	}
	return net.JoinHostPort(host, port)
}
