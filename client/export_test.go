package client

import "time"

// WithClock replaces the client's clock (cache freshness, discover TTL).
func WithClock(now func() time.Time) Option { return withClock(now) }
