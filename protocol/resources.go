package protocol

import "encoding/json"

// Resource describes a resource the server offers. All versions; Title is
// 2025-06-18 and later, Icons 2025-11-25 and later.
type Resource struct {
	URI         string       `json:"uri"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Size        *int64       `json:"size,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template. All versions; Title is 2025-06-18 and later, Icons 2025-11-25
// and later.
type ResourceTemplate struct {
	URITemplate string       `json:"uriTemplate"`
	Name        string       `json:"name"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	MIMEType    string       `json:"mimeType,omitempty"`
	Annotations *Annotations `json:"annotations,omitempty"`
	Icons       []Icon       `json:"icons,omitempty"`
	Meta        Meta         `json:"_meta,omitempty"`
}

// ListResourcesResult is the result of resources/list. All versions;
// ResultType, TTLMs and CacheScope are 2026-07-28 (cacheable result).
// NextCursor is nil on the last page.
type ListResourcesResult struct {
	ResultType string     `json:"resultType,omitempty"`
	Resources  []Resource `json:"resources"`
	NextCursor *string    `json:"nextCursor,omitempty"`
	// TTLMs is the freshness hint in milliseconds; nil and negative mean 0.
	// Decoding reads it as a hint, never failing the result: a whole
	// number spelled as a float (300000.0, 3e5) reads as that number, one
	// past int64 as its bound, a fraction or a value that is no number
	// as nil.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope is "public" or "private"; anything else means private.
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// MarshalJSON encodes r, writing "resources": [] when Resources is nil.
func (r ListResourcesResult) MarshalJSON() ([]byte, error) {
	type plain ListResourcesResult
	if r.Resources == nil {
		r.Resources = []Resource{}
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs is read as a hint: see [ListResourcesResult.TTLMs].
func (r *ListResourcesResult) UnmarshalJSON(data []byte) error {
	type plain ListResourcesResult
	w := struct {
		*plain
		TTLMs json.RawMessage `json:"ttlMs"` // shadows plain's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&r.TTLMs, w.TTLMs)
	return nil
}

// ListResourceTemplatesResult is the result of resources/templates/list.
// All versions; ResultType, TTLMs and CacheScope are 2026-07-28.
// NextCursor is nil on the last page.
type ListResourceTemplatesResult struct {
	ResultType        string             `json:"resultType,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	NextCursor        *string            `json:"nextCursor,omitempty"`
	// TTLMs is the freshness hint in milliseconds; nil and negative mean 0.
	// Decoding reads it as a hint, never failing the result: a whole
	// number spelled as a float (300000.0, 3e5) reads as that number, one
	// past int64 as its bound, a fraction or a value that is no number
	// as nil.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope is "public" or "private"; anything else means private.
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// MarshalJSON encodes r, writing "resourceTemplates": [] when
// ResourceTemplates is nil.
func (r ListResourceTemplatesResult) MarshalJSON() ([]byte, error) {
	type plain ListResourceTemplatesResult
	if r.ResourceTemplates == nil {
		r.ResourceTemplates = []ResourceTemplate{}
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs is read as a hint: see [ListResourceTemplatesResult.TTLMs].
func (r *ListResourceTemplatesResult) UnmarshalJSON(data []byte) error {
	type plain ListResourceTemplatesResult
	w := struct {
		*plain
		TTLMs json.RawMessage `json:"ttlMs"` // shadows plain's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&r.TTLMs, w.TTLMs)
	return nil
}

// ReadResourceParams are the params of resources/read. All versions;
// InputResponses and RequestState are the 2026-07-28 MRTR retry members
// (see [CallToolParams] for their rules).
type ReadResourceParams struct {
	URI            string         `json:"uri"`
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	RequestState   *string        `json:"requestState,omitempty"`
	Meta           Meta           `json:"_meta,omitempty"`
}

// ReadResourceResult is the complete result of resources/read. All
// versions; ResultType, TTLMs and CacheScope are 2026-07-28.
type ReadResourceResult struct {
	ResultType string             `json:"resultType,omitempty"`
	Contents   []ResourceContents `json:"contents"`
	// TTLMs is the freshness hint in milliseconds; nil and negative mean 0.
	// Decoding reads it as a hint, never failing the result: a whole
	// number spelled as a float (300000.0, 3e5) reads as that number, one
	// past int64 as its bound, a fraction or a value that is no number
	// as nil.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope is "public" or "private"; anything else means private.
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// SubscribeParams are the params of resources/subscribe and
// resources/unsubscribe (2025-11-25, 2025-06-18; removed in 2026-07-28,
// where subscriptions/listen replaces them). The result is an
// [EmptyResult].
type SubscribeParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}

// UnsubscribeParams are the params of resources/unsubscribe.
type UnsubscribeParams = SubscribeParams

// MarshalJSON encodes r, writing "contents": [] when Contents is nil.
func (r ReadResourceResult) MarshalJSON() ([]byte, error) {
	type plain ReadResourceResult
	if r.Contents == nil {
		r.Contents = []ResourceContents{}
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs is read as a hint: see [ReadResourceResult.TTLMs].
func (r *ReadResourceResult) UnmarshalJSON(data []byte) error {
	type plain ReadResourceResult
	w := struct {
		*plain
		TTLMs json.RawMessage `json:"ttlMs"` // shadows plain's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&r.TTLMs, w.TTLMs)
	return nil
}
