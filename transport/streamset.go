package transport

import "github.com/conduitmcp/conduit/jsonrpc"

// streamSet maps the ids of a connection's requests in flight to their
// streams. The first lives in the set itself, since a connection mostly
// has one request in flight at a time; the others go to a map made for
// them. An id is in one place at most.
type streamSet struct {
	id   jsonrpc.ID
	st   *reqStream // the inline entry; nil when it is free
	more map[jsonrpc.ID]*reqStream
}

// get returns the stream of id, or nil.
func (s *streamSet) get(id jsonrpc.ID) *reqStream {
	if s.st != nil && s.id == id {
		return s.st
	}
	return s.more[id]
}

// put sets the stream of id to st (not nil).
func (s *streamSet) put(id jsonrpc.ID, st *reqStream) {
	switch {
	case s.st != nil && s.id == id:
		s.st = st
	case s.more[id] != nil:
		s.more[id] = st
	case s.st == nil:
		s.id, s.st = id, st
	default:
		if s.more == nil {
			s.more = make(map[jsonrpc.ID]*reqStream)
		}
		s.more[id] = st
	}
}

// remove removes id; with st not nil, only when id maps to st. It returns
// what id mapped to (nil when nothing, or not st).
func (s *streamSet) remove(id jsonrpc.ID, st *reqStream) *reqStream {
	if s.st != nil && s.id == id {
		if st != nil && s.st != st {
			return nil
		}
		old := s.st
		s.id, s.st = jsonrpc.ID{}, nil
		return old
	}
	old := s.more[id]
	if old == nil || st != nil && old != st {
		return nil
	}
	delete(s.more, id)
	return old
}
