package transport

// NameHeader exposes nameHeader to the tests.
var NameHeader = nameHeader

// MediaType exposes mediaType to the tests.
var MediaType = mediaType
