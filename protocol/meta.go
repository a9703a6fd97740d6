package protocol

import (
	"encoding/json"
	"fmt"
)

// The accessors below read and write the well-known _meta keys. Reads are
// lenient: a key that is absent or holds the wrong JSON type reads as
// absent, so a peer's malformed _meta never fails a whole message. Writes
// create the map when it is nil.

// Set stores v, encoded as JSON, under key. A nil map is created. It fails
// only when v cannot be encoded.
func (m *Meta) Set(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("protocol: encoding _meta %q: %w", key, err)
	}
	if *m == nil {
		*m = make(Meta)
	}
	(*m)[key] = b
	return nil
}

// Clone returns a copy of m whose values are copied too; nil stays nil.
func (m Meta) Clone() Meta {
	if m == nil {
		return nil
	}
	c := make(Meta, len(m))
	for k, v := range m {
		c[k] = append(json.RawMessage(nil), v...)
	}
	return c
}

// Lookup decodes the value under key into v and reports whether it was
// present and well-formed.
func (m Meta) Lookup(key string, v any) bool {
	raw, ok := m[key]
	if !ok || len(raw) == 0 {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

// ProtocolVersion returns the io.modelcontextprotocol/protocolVersion key
// (modern requests), or "".
func (m Meta) ProtocolVersion() string {
	var s string
	m.Lookup(MetaProtocolVersion, &s)
	return s
}

// ClientCapabilities returns the io.modelcontextprotocol/clientCapabilities
// key (modern requests), or nil when absent or malformed.
func (m Meta) ClientCapabilities() *ClientCapabilities {
	var c ClientCapabilities
	if !m.Lookup(MetaClientCapabilities, &c) {
		return nil
	}
	return &c
}

// ClientInfo returns the io.modelcontextprotocol/clientInfo key (modern
// requests), or nil when absent or malformed.
func (m Meta) ClientInfo() *Implementation {
	var impl Implementation
	if !m.Lookup(MetaClientInfo, &impl) {
		return nil
	}
	return &impl
}

// ServerInfo returns the io.modelcontextprotocol/serverInfo key (modern
// results), or nil when absent or malformed.
func (m Meta) ServerInfo() *Implementation {
	var impl Implementation
	if !m.Lookup(MetaServerInfo, &impl) {
		return nil
	}
	return &impl
}

// LogLevel returns the io.modelcontextprotocol/logLevel key (modern
// requests), or "".
func (m Meta) LogLevel() LoggingLevel {
	var l LoggingLevel
	m.Lookup(MetaLogLevel, &l)
	return l
}

// SubscriptionID returns the io.modelcontextprotocol/subscriptionId key
// (modern listen notifications and results); the zero RequestID when
// absent or malformed.
func (m Meta) SubscriptionID() RequestID {
	var id RequestID
	m.Lookup(MetaSubscriptionID, &id)
	return id
}

// ProgressToken returns the progressToken key (requests, all versions);
// the zero ProgressToken when absent or malformed.
func (m Meta) ProgressToken() ProgressToken {
	var t ProgressToken
	m.Lookup(MetaProgressToken, &t)
	return t
}

// RelatedTask returns the taskId of the io.modelcontextprotocol/related-task
// key (2025-11-25 tasks), or "".
func (m Meta) RelatedTask() string {
	var rt RelatedTaskMetadata
	m.Lookup(MetaRelatedTask, &rt)
	return rt.TaskID
}

// RequestMeta is the typed form of a modern request's required _meta
// (RequestMetaObject, 2026-07-28). [RequestMeta.Meta] turns it into a
// [Meta], keeping the keys of Extra.
type RequestMeta struct {
	// ProtocolVersion is required.
	ProtocolVersion string
	// ClientCapabilities is required; the zero value encodes as {}.
	ClientCapabilities ClientCapabilities
	// ClientInfo is optional (SHOULD be sent); nil leaves it out.
	ClientInfo *Implementation
	// LogLevel is optional (deprecated feature); "" leaves it out.
	LogLevel LoggingLevel
	// ProgressToken is optional; the zero value leaves it out.
	ProgressToken ProgressToken
	// Extra holds further keys (trace context, extensions); they are
	// copied as they are and never override the typed keys above.
	Extra Meta
}

// Meta encodes r as a _meta object.
func (r RequestMeta) Meta() (Meta, error) {
	m := r.Extra.Clone()
	if err := m.Set(MetaProtocolVersion, r.ProtocolVersion); err != nil {
		return nil, err
	}
	if err := m.Set(MetaClientCapabilities, r.ClientCapabilities); err != nil {
		return nil, err
	}
	if r.ClientInfo != nil {
		if err := m.Set(MetaClientInfo, r.ClientInfo); err != nil {
			return nil, err
		}
	}
	if r.LogLevel != "" {
		if err := m.Set(MetaLogLevel, r.LogLevel); err != nil {
			return nil, err
		}
	}
	if r.ProgressToken.IsValid() {
		if err := m.Set(MetaProgressToken, r.ProgressToken); err != nil {
			return nil, err
		}
	}
	return m, nil
}
