package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// RequestParams are the params of a request that has no other members:
// server/discover (2026-07-28, where _meta is required), and the legacy
// ping and roots/list. Meta carries the per-request keys in the modern era
// (see [RequestMeta]).
type RequestParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// DiscoverParams are the params of server/discover (2026-07-28): only the
// required per-request _meta.
type DiscoverParams = RequestParams

// PingParams are the params of the legacy ping (2025-11-25, 2025-06-18);
// ping is removed in 2026-07-28.
type PingParams = RequestParams

// NotificationParams are the params of a notification without other
// members: notifications/initialized, the list_changed notifications,
// notifications/roots/list_changed. All versions; in 2026-07-28 listen
// notifications carry io.modelcontextprotocol/subscriptionId in _meta (see
// [Meta.SubscriptionID]).
type NotificationParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ListChangedParams are the params of notifications/tools/list_changed,
// notifications/prompts/list_changed and
// notifications/resources/list_changed. All versions.
type ListChangedParams = NotificationParams

// EmptyResult is a result with no members of its own: ping (legacy),
// resources/subscribe and resources/unsubscribe (legacy),
// logging/setLevel (legacy), and the tasks extension's tasks/update and
// tasks/cancel (2026-07-28). ResultType is "complete" from modern servers
// and absent from legacy ones.
type EmptyResult struct {
	ResultType string `json:"resultType,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// PaginatedParams are the params of a paginated list request:
// tools/list, prompts/list, resources/list, resources/templates/list and
// (2025-11-25) tasks/list. All versions.
//
// Cursor is a pointer because an empty-string cursor is still a cursor:
// nil asks for the first page, a non-nil pointer sends the server's
// nextCursor back exactly, even when it is "".
type PaginatedParams struct {
	Cursor *string `json:"cursor,omitempty"`
	Meta   Meta    `json:"_meta,omitempty"`
}

// ListToolsParams are the params of tools/list.
type ListToolsParams = PaginatedParams

// ListPromptsParams are the params of prompts/list.
type ListPromptsParams = PaginatedParams

// ListResourcesParams are the params of resources/list.
type ListResourcesParams = PaginatedParams

// ListResourceTemplatesParams are the params of resources/templates/list.
type ListResourceTemplatesParams = PaginatedParams

// ListTasksParams are the params of the 2025-11-25 tasks/list.
type ListTasksParams = PaginatedParams

// Cursor returns a pointer to a copy of s, for [PaginatedParams.Cursor].
func Cursor(s string) *string { return &s }

// ResultTypeOf returns the resultType of a raw result object; it is the
// one reader of resultType in the module. A missing resultType, as from
// legacy servers, reads as "complete", as the 2026-07-28 spec requires of
// clients. Any present value must be a non-empty string (the schema types
// it as a string, and seed 004 allows only an absent one or a value): it
// fails for null, another JSON type or "", and when raw is not a JSON
// object. Whether the value is one the caller accepts (complete,
// input_required, task) is the caller's decision. Of duplicate members the
// last one counts and keys match as encoding/json matches them.
func ResultTypeOf(raw json.RawMessage) (string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return "", errors.New("protocol: result is not a JSON object")
	}
	val, err := jsonscan.LastMemberFold(trimmed, "resultType")
	if err != nil {
		// encoding/json words the syntax error.
		var probe struct{}
		err := json.Unmarshal(trimmed, &probe)
		return "", fmt.Errorf("protocol: decoding result: %v", err)
	}
	switch val.Kind {
	case jsonscan.KindAbsent:
		return ResultTypeComplete, nil
	case jsonscan.KindString:
	default:
		return "", errors.New("protocol: resultType is not a string")
	}
	switch {
	case jsonscan.StringIs(trimmed, val, ResultTypeComplete):
		return ResultTypeComplete, nil
	case jsonscan.StringIs(trimmed, val, ResultTypeInputRequired):
		return ResultTypeInputRequired, nil
	case jsonscan.StringIs(trimmed, val, ResultTypeTask):
		return ResultTypeTask, nil
	case val.End-val.Start == 2:
		return "", errors.New("protocol: resultType is empty")
	}
	var b strings.Builder
	jsonscan.WriteString(&b, trimmed, val)
	return b.String(), nil
}

// setHintMs stores in *dst the millisecond hint raw (the ttlMs member of a
// cacheable result, as decoded into a json.RawMessage; nil when absent,
// which leaves *dst alone) as the client's cache reads it: a JSON number
// with a whole value however it is spelled (300000, 300000.0, 3e5),
// saturated at the bounds of int64; nil for null, for a number with a
// fraction and for a value that is no number. A freshness hint that
// breaks the schema never fails the result that carries it.
func setHintMs(dst **int64, raw json.RawMessage) {
	if raw == nil {
		return
	}
	*dst = nil
	s := string(bytes.TrimSpace(raw))
	if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') {
		return // null, or not a number
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, err := strconv.ParseFloat(s, 64)
		switch {
		case err != nil && !errors.Is(err, strconv.ErrRange), f != math.Trunc(f):
			return // a fraction (or, decoded, unreachable: not a number)
		case f >= math.MaxInt64: // 2⁶³ and beyond, ±Inf included
			n = math.MaxInt64
		case f <= math.MinInt64:
			n = math.MinInt64
		default:
			n = int64(f)
		}
	}
	*dst = &n
}
