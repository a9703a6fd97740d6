package transport

// NameHeader exposes nameHeader to the tests.
var NameHeader = nameHeader
