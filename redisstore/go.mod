module github.com/conduitmcp/conduit/redisstore

go 1.26.0

require (
	github.com/conduitmcp/conduit v0.0.0
	github.com/redis/go-redis/v9 v9.24.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v5 v5.0.3 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-jose/go-jose/v4 v4.1.9 // indirect
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/oauth2 v0.38.0 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.14.0 // indirect
)

replace github.com/conduitmcp/conduit => ../
